package apps

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
)

func node(name string, conds ...corev1.NodeCondition) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Conditions: conds}}
}

func TestNotReadyNodesSaysWhy(t *testing.T) {
	ready := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue}
	runtimeDown := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionFalse,
		Reason: "KubeletNotReady", Message: "container runtime is down"}
	unknown := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionUnknown}
	pressure := corev1.NodeCondition{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionTrue}
	got := notReadyNodes([]corev1.Node{node("a", ready, pressure), node("b", runtimeDown), node("c", unknown),
		node("d")})
	want := map[string]string{
		"b": "Ready=False: container runtime is down",
		"c": "Ready=Unknown",
		"d": "reports no Ready condition",
	}
	if len(got) != len(want) {
		t.Fatalf("notReadyNodes() = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("notReadyNodes()[%q] = %q, want %q", k, got[k], v)
		}
	}
}

func TestUnvouchedPodsNamesReadyPodsOnNotReadyNodes(t *testing.T) {
	pod := func(name, node string, ready corev1.ConditionStatus) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{NodeName: node},
			Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: ready}}}}
	}
	deleting := pod("d", "bad", corev1.ConditionTrue)
	deleting.DeletionTimestamp = &metav1.Time{}
	notReady := map[string]string{"bad": "Ready=False: container runtime is down"}
	for _, tc := range []struct {
		name string
		pods []corev1.Pod
		want string
	}{
		{"no Pods", nil, ""},
		{"ready Pods on ready nodes", []corev1.Pod{pod("a", "good", corev1.ConditionTrue)}, ""},
		{"not ready on the bad node: nothing claimed", []corev1.Pod{pod("a", "bad", corev1.ConditionFalse)}, ""},
		{"being deleted", []corev1.Pod{deleting}, ""},
		{"one", []corev1.Pod{pod("a", "good", corev1.ConditionTrue), pod("b", "bad", corev1.ConditionTrue)},
			"Pod b is ready, but its node bad is not (Ready=False: container runtime is down)"},
		{"several, the first by name", []corev1.Pod{pod("z", "bad", corev1.ConditionTrue),
			pod("b", "bad", corev1.ConditionTrue)},
			"Pod b is ready, but its node bad is not (Ready=False: container runtime is down); 1 more Pods likewise"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := unvouchedPods(tc.pods, notReady); got != tc.want {
				t.Errorf("unvouchedPods() = %q, want %q", got, tc.want)
			}
		})
	}
}

// A rolled-out Deployment whose ready Pod runs on a node that is not Ready
// does not make its Application Ready: NodeNotReady, Reconciling.
func TestReadyConditionNodeNotReady(t *testing.T) {
	one := int32(1)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", Generation: 1},
		Spec:       appsv1.DeploymentSpec{Replicas: &one},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1,
			AvailableReplicas: 1, Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"},
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"},
			}},
	}
	app := &sunappsv1.Application{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", Generation: 1}}
	if c := readyCondition(app, &observation{deployment: d}); c.Status != metav1.ConditionTrue {
		t.Fatalf("without a node that is not Ready: %s %s %s", c.Status, c.Reason, c.Message)
	}
	msg := "Pod web-1 is ready, but its node n is not (Ready=False: container runtime is down)"
	c := readyCondition(app, &observation{deployment: d, unvouched: msg})
	if c.Status != metav1.ConditionFalse || c.Reason != sunappsv1.ReasonNodeNotReady || c.Message != msg {
		t.Errorf("readyCondition() = %s %s %q, want False NodeNotReady %q", c.Status, c.Reason, c.Message, msg)
	}
	status := computeStatus(app, &observation{deployment: d, unvouched: msg})
	var reconciling bool
	for _, c := range status.Conditions {
		if c.Type == sunappsv1.ConditionReconciling && c.Status == metav1.ConditionTrue {
			reconciling = c.Reason == sunappsv1.ReasonNodeNotReady
		}
		if c.Type == sunappsv1.ConditionStalled {
			t.Errorf("Stalled: %v", c)
		}
	}
	if !reconciling {
		t.Errorf("Reconciling=True NodeNotReady missing: %v", status.Conditions)
	}
}
