package machinery

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

func TestNodeReadyTransformKeepsNameAndReadyOnly(t *testing.T) {
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n", ResourceVersion: "7", Labels: map[string]string{"a": "b"},
			Annotations: map[string]string{"x": "y"}},
		Spec: corev1.NodeSpec{PodCIDR: "10.0.0.0/24"},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{
				{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse},
				{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: "KubeletNotReady", Message: "runtime down"},
			},
			Images: []corev1.ContainerImage{{Names: []string{"big"}}},
		},
	}
	out, err := NodeReadyTransform()(n)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.Node)
	if got.Name != "n" || got.ResourceVersion != "7" || got.Labels != nil || got.Annotations != nil ||
		got.Spec.PodCIDR != "" || got.Status.Images != nil {
		t.Errorf("kept more than the name and Ready: %+v", got)
	}
	if len(got.Status.Conditions) != 1 || got.Status.Conditions[0].Message != "runtime down" {
		t.Errorf("conditions = %+v, want Ready alone", got.Status.Conditions)
	}
	again, _ := NodeReadyTransform()(got)
	if again.(*corev1.Node).Status.Conditions[0] != got.Status.Conditions[0] {
		t.Error("not idempotent")
	}
	if other, _ := NodeReadyTransform()("tombstone"); other != "tombstone" {
		t.Error("other objects must pass unchanged")
	}
}

func TestNodeReadyChangedOnlyOnReadinessChanges(t *testing.T) {
	withReady := func(s corev1.ConditionStatus, msg string) *corev1.Node {
		return &corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: s, Message: msg}}}}
	}
	p := NodeReadyChanged()
	for _, tc := range []struct {
		name     string
		old, new *corev1.Node
		want     bool
	}{
		{"heartbeat", withReady(corev1.ConditionTrue, "a"), withReady(corev1.ConditionTrue, "b"), false},
		{"stops being Ready", withReady(corev1.ConditionTrue, ""), withReady(corev1.ConditionFalse, ""), true},
		{"Ready again", withReady(corev1.ConditionUnknown, ""), withReady(corev1.ConditionTrue, ""), true},
		{"still not Ready", withReady(corev1.ConditionFalse, "a"), withReady(corev1.ConditionUnknown, "b"), false},
	} {
		if got := p.Update(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new}); got != tc.want {
			t.Errorf("%s: Update = %t, want %t", tc.name, got, tc.want)
		}
	}
	if p.Create(event.CreateEvent{Object: withReady(corev1.ConditionTrue, "")}) {
		t.Error("a Ready node's creation changes nothing")
	}
	if !p.Create(event.CreateEvent{Object: withReady(corev1.ConditionFalse, "")}) {
		t.Error("a node created not Ready counts")
	}
	if !p.Delete(event.DeleteEvent{Object: withReady(corev1.ConditionFalse, "")}) {
		t.Error("a node deleted while not Ready counts")
	}
}
