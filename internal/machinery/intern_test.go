/*
Copyright 2026 The sunstrider operator authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package machinery

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	toolscache "k8s.io/client-go/tools/cache"
)

// decodedDeployment is a Deployment of app as a watch delivers it: decoded
// from its JSON, so that each copy has its own strings.
func decodedDeployment(t testing.TB, app string) *appsv1.Deployment {
	t.Helper()
	objLabels := map[string]string{"app": app, "app.kubernetes.io/managed-by": "sunstrider-operator"}
	d := &appsv1.Deployment{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{
			Name: app, Namespace: "team-a", UID: types.UID("uid-" + app), ResourceVersion: "42",
			Labels:          objLabels,
			Annotations:     map[string]string{"sunstrider.cn/applied-config-hash": "3d824dab723e9448"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps.sunstrider.cn/v1", Kind: "Application", Name: app, UID: "uid-app"}},
			ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kubectl-edit", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{}}`)}},
		},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "nginx", Image: "nginx:1.25", ImagePullPolicy: corev1.PullIfNotPresent,
					Ports: []corev1.ContainerPort{{ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
				}}},
			},
			Strategy: appsv1.DeploymentStrategy{RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: new(intstr.FromString("25%"))}},
		},
		Status: appsv1.DeploymentStatus{Conditions: []appsv1.DeploymentCondition{{
			Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue,
			Reason: "MinimumReplicasAvailable", Message: "Deployment has minimum availability.",
		}}},
	}
	data, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	decoded := &appsv1.Deployment{}
	if err := json.Unmarshal(data, decoded); err != nil {
		t.Fatal(err)
	}
	return decoded
}

func sameCopy(a, b string) bool {
	return unsafe.StringData(a) == unsafe.StringData(b)
}

func TestInternerSharesEqualStrings(t *testing.T) {
	g := NewWithT(t)
	in := NewInterner()
	transform := in.Transform(nil)
	a, b := decodedDeployment(t, "shop"), decodedDeployment(t, "shop")
	want := a.DeepCopy()
	for _, d := range []*appsv1.Deployment{a, b} {
		out, err := transform(d)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(out).To(BeIdenticalTo(d))
	}
	g.Expect(a).To(Equal(want), "interning changes no value")

	shared := []struct {
		name string
		a, b string
	}{
		{"name", a.Name, b.Name},
		{"namespace", a.Namespace, b.Namespace},
		{"owner reference", a.OwnerReferences[0].Name, b.OwnerReferences[0].Name},
		{"name in an owner reference and in the object", a.OwnerReferences[0].Name, b.Name},
		{"label value and name", a.Labels["app"], a.Name},
		{"selector value", a.Spec.Selector.MatchLabels["app"], b.Spec.Template.Labels["app"]},
		{"image", a.Spec.Template.Spec.Containers[0].Image, b.Spec.Template.Spec.Containers[0].Image},
		{"typed string (protocol)", string(a.Spec.Template.Spec.Containers[0].Ports[0].Protocol),
			string(b.Spec.Template.Spec.Containers[0].Ports[0].Protocol)},
		{"int-or-string", a.Spec.Strategy.RollingUpdate.MaxSurge.StrVal, b.Spec.Strategy.RollingUpdate.MaxSurge.StrVal},
		{"condition message", a.Status.Conditions[0].Message, b.Status.Conditions[0].Message},
		{"managedFields manager", a.ManagedFields[0].Manager, b.ManagedFields[0].Manager},
	}
	for _, s := range shared {
		g.Expect(sameCopy(s.a, s.b)).To(BeTrue(), s.name)
	}
	for key := range a.Labels {
		for other := range b.Labels {
			if key == other {
				g.Expect(sameCopy(key, other)).To(BeTrue(), "label key %s", key)
			}
		}
	}
	g.Expect(sameCopy(string(a.UID), string(b.UID))).To(BeFalse())
	g.Expect(in.holds("42")).To(BeFalse(), "resourceVersions are not interned")
	g.Expect(in.holds("uid-shop")).To(BeFalse(), "UIDs are not interned")
	in.Intern(&struct{ Data []byte }{Data: []byte("bytes")})
	g.Expect(in.holds("bytes")).To(BeFalse(), "byte slices are left alone")
}

func TestInternerSharesEqualMaps(t *testing.T) {
	g := NewWithT(t)
	in := NewInterner()
	a, b, other := decodedDeployment(t, "shop"), decodedDeployment(t, "shop"), decodedDeployment(t, "cart")
	for _, d := range []*appsv1.Deployment{a, b, other} {
		in.Intern(d)
	}
	same := func(x, y any) bool { return reflect.ValueOf(x).Pointer() == reflect.ValueOf(y).Pointer() }
	g.Expect(same(a.Spec.Selector.MatchLabels, a.Spec.Template.Labels)).To(BeTrue(), "selector and Pod labels of one object")
	g.Expect(same(a.Spec.Selector.MatchLabels, b.Spec.Template.Labels)).To(BeTrue(), "across objects")
	g.Expect(same(a.Labels, b.Labels)).To(BeTrue())
	g.Expect(same(a.Labels, a.Spec.Selector.MatchLabels)).To(BeFalse(), "other entries")
	g.Expect(same(a.Spec.Selector.MatchLabels, other.Spec.Selector.MatchLabels)).To(BeFalse(), "other values")
	g.Expect(a.Spec.Selector.MatchLabels).To(Equal(map[string]string{"app": "shop"}))
	g.Expect(other.Spec.Selector.MatchLabels).To(Equal(map[string]string{"app": "cart"}))

	// A map of another type with the same entries is not given the shared
	// one (it could not hold it).
	typed := &struct{ Labels labels.Set }{Labels: labels.Set{"app": "shop"}}
	in.Intern(typed)
	g.Expect(typed.Labels).To(Equal(labels.Set{"app": "shop"}))
}

func TestInternerLeavesLongStringsAlone(t *testing.T) {
	g := NewWithT(t)
	in := NewInterner()
	file := strings.Repeat("x", internMaxLen+1)
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "settings", Annotations: map[string]string{"note": file}},
		Data:       map[string]string{"app.yaml": file},
	}
	data, annotations := reflect.ValueOf(cm.Data).Pointer(), reflect.ValueOf(cm.Annotations).Pointer()
	in.Intern(cm)
	g.Expect(reflect.ValueOf(cm.Data).Pointer()).To(Equal(data), "a map holding a long value is not replaced")
	g.Expect(reflect.ValueOf(cm.Annotations).Pointer()).To(Equal(annotations))
	g.Expect(in.holds(file)).To(BeFalse())
	g.Expect(in.holds("settings")).To(BeTrue())
}

func TestInternerTransform(t *testing.T) {
	g := NewWithT(t)
	in := NewInterner()
	tombstone := toolscache.DeletedFinalStateUnknown{Key: "team-a/shop", Obj: decodedDeployment(t, "shop")}
	out, err := in.Transform(nil)(tombstone)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(Equal(tombstone))
	g.Expect(in.strings.current).To(BeEmpty(), "a tombstone is not walked")

	// The transform before it runs first: here it drops managedFields.
	strip := func(obj any) (any, error) {
		obj.(*appsv1.Deployment).ManagedFields = nil
		return obj, nil
	}
	out, err = in.Transform(strip)(decodedDeployment(t, "shop"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out.(*appsv1.Deployment).ManagedFields).To(BeNil())
	g.Expect(in.holds("nginx:1.25")).To(BeTrue())
	g.Expect(in.holds("kubectl-edit")).To(BeFalse())

	failing := func(obj any) (any, error) { return obj, fmt.Errorf("no") }
	_, err = in.Transform(failing)(decodedDeployment(t, "shop"))
	g.Expect(err).To(MatchError("no"))
}

func TestInternerForgetsStringsNotSeenForTwoGenerations(t *testing.T) {
	g := NewWithT(t)
	in := NewInterner()
	first := decodedDeployment(t, "shop")
	in.Intern(first)
	g.Expect(in.holds("shop")).To(BeTrue())
	// Two generations of other strings, the image seen again in each.
	for i := range 2 * internGeneration {
		in.Intern(&corev1.ObjectReference{Name: fmt.Sprint(i)})
		if i%1000 == 0 {
			in.Intern(decodedDeployment(t, fmt.Sprint("other-", i)))
		}
	}
	g.Expect(in.holds("shop")).To(BeFalse(), "seen once, two generations ago")
	g.Expect(len(in.strings.current) + len(in.strings.previous)).To(BeNumerically("<=", 2*internGeneration))
	second := decodedDeployment(t, "shop")
	in.Intern(second)
	g.Expect(sameCopy(first.Spec.Template.Spec.Containers[0].Image, second.Spec.Template.Spec.Containers[0].Image)).To(BeTrue(),
		"a string seen in every generation keeps its copy")
	g.Expect(sameCopy(first.Name, second.Name)).To(BeFalse(), "a forgotten string gets a new copy")
	g.Expect(second.Name).To(Equal("shop"))
}

// holds tells whether s is in one of the strings table's generations.
func (in *Interner) holds(s string) bool {
	_, current := in.strings.current[s]
	_, previous := in.strings.previous[s]
	return current || previous
}

// BenchmarkInternDeployment is the CPU an informer spends per Deployment
// event on interning (go test -bench Intern ./internal/controller).
func BenchmarkInternDeployment(b *testing.B) {
	in := NewInterner()
	objs := make([]*appsv1.Deployment, 1000)
	for i := range objs {
		objs[i] = decodedDeployment(b, fmt.Sprintf("app-%d", i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		in.Intern(objs[i%len(objs)])
	}
}
