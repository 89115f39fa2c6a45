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

package webapp

import (
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	webappv1 "sunstrider.cn/operator/api/webapp/v1"
	"sunstrider.cn/operator/internal/apply"
)

func testGuestbook() *webappv1.Guestbook {
	return &webappv1.Guestbook{
		ObjectMeta: metav1.ObjectMeta{Name: "gb", UID: "gb-uid"},
		Spec: webappv1.GuestbookSpec{
			Size:          3,
			ConfigMapName: "gb-conf",
			Type:          webappv1.AliasPhone,
			Namespace:     "shop",
		},
	}
}

func expectOwnedChild(g Gomega, obj metav1.Object, name, namespace string) {
	g.Expect(obj.GetName()).To(Equal(name))
	g.Expect(obj.GetNamespace()).To(Equal(namespace))
	g.Expect(obj.GetLabels()).To(HaveKeyWithValue(apply.ManagedByLabel, apply.ManagedByValue))
	g.Expect(obj.GetLabels()).To(HaveKeyWithValue(LabelGuestbook, "gb"))
	g.Expect(obj.GetAnnotations()).To(HaveKey(apply.HashAnnotation))
	g.Expect(apply.IsControlledBy(obj, "gb-uid")).To(BeTrue())
	ref := obj.GetOwnerReferences()[0]
	g.Expect(ref.APIVersion).To(Equal("webapp.my.domain/v1"))
	g.Expect(ref.Kind).To(Equal("Guestbook"))
	g.Expect(*ref.BlockOwnerDeletion).To(BeTrue())
}

func TestDesiredConfigMap(t *testing.T) {
	g := NewWithT(t)
	cm, err := desiredConfigMap(testGuestbook())
	g.Expect(err).NotTo(HaveOccurred())
	expectOwnedChild(g, cm, "gb-conf", "shop")
	g.Expect(cm.Data).To(Equal(defaultConfig))
	cm.Data["x"] = "y"
	g.Expect(defaultConfig).NotTo(HaveKey("x"), "the defaults are copied, not shared")
}

func TestDesiredStatefulSet(t *testing.T) {
	tests := []struct {
		name      string
		mutate    func(*webappv1.Guestbook)
		image     string
		wantImage string
		wantEnv   []corev1.EnvVar
		wantNS    string
	}{
		{
			name:      "alias and image",
			image:     "example.com/guestbook:v9",
			wantImage: "example.com/guestbook:v9",
			wantEnv:   []corev1.EnvVar{{Name: EnvAlias, Value: "Phone"}},
			wantNS:    "shop",
		},
		{
			name:      "no alias, default image, default namespace",
			mutate:    func(gb *webappv1.Guestbook) { gb.Spec.Type = ""; gb.Spec.Namespace = "" },
			wantImage: DefaultGuestbookImage,
			wantNS:    webappv1.DefaultNamespace,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			gb := testGuestbook()
			if tt.mutate != nil {
				tt.mutate(gb)
			}
			sts, err := desiredStatefulSet(gb, tt.image, "sum1")
			g.Expect(err).NotTo(HaveOccurred())
			expectOwnedChild(g, sts, "gb", tt.wantNS)
			g.Expect(*sts.Spec.Replicas).To(Equal(int32(3)))
			g.Expect(sts.Spec.PodManagementPolicy).To(Equal(appsv1.ParallelPodManagement))
			g.Expect(sts.Spec.Selector.MatchLabels).To(HaveKeyWithValue(LabelGuestbook, "gb"))
			g.Expect(sts.Spec.Selector.MatchLabels).NotTo(HaveKey(LabelRole), "the role changes; the selector cannot")

			tpl := sts.Spec.Template
			for k, v := range sts.Spec.Selector.MatchLabels {
				g.Expect(tpl.Labels).To(HaveKeyWithValue(k, v))
			}
			g.Expect(tpl.Annotations).To(HaveKeyWithValue(AnnotationConfigChecksum, "sum1"))
			pod := tpl.Spec
			g.Expect(*pod.SecurityContext.RunAsNonRoot).To(BeTrue())
			g.Expect(pod.SecurityContext.SeccompProfile.Type).To(Equal(corev1.SeccompProfileTypeRuntimeDefault))
			g.Expect(pod.Containers).To(HaveLen(1))
			c := pod.Containers[0]
			g.Expect(c.Image).To(Equal(tt.wantImage))
			g.Expect(c.Env).To(Equal(tt.wantEnv))
			g.Expect(*c.SecurityContext.AllowPrivilegeEscalation).To(BeFalse())
			g.Expect(*c.SecurityContext.ReadOnlyRootFilesystem).To(BeTrue())
			g.Expect(c.SecurityContext.Capabilities.Drop).To(ConsistOf(corev1.Capability("ALL")))
			g.Expect(c.ReadinessProbe).NotTo(BeNil())
			g.Expect(c.VolumeMounts).To(ContainElement(corev1.VolumeMount{Name: configVolume, MountPath: configMountPath, ReadOnly: true}))
			g.Expect(pod.Volumes[0].ConfigMap.Name).To(Equal("gb-conf"))
		})
	}
}

func TestDesiredStatefulSetHashFollowsInputs(t *testing.T) {
	g := NewWithT(t)
	hash := func(gb *webappv1.Guestbook, checksum string) string {
		sts, err := desiredStatefulSet(gb, "img", checksum)
		g.Expect(err).NotTo(HaveOccurred())
		return sts.Annotations[apply.HashAnnotation]
	}
	base := hash(testGuestbook(), "sum1")
	g.Expect(hash(testGuestbook(), "sum1")).To(Equal(base), "deterministic")
	g.Expect(hash(testGuestbook(), "sum2")).NotTo(Equal(base), "config change")
	noAlias := testGuestbook()
	noAlias.Spec.Type = ""
	g.Expect(hash(noAlias, "sum1")).NotTo(Equal(base), "a removed field changes the hash")
	bigger := testGuestbook()
	bigger.Spec.Size = 5
	g.Expect(hash(bigger, "sum1")).NotTo(Equal(base))
}

func TestDesiredService(t *testing.T) {
	g := NewWithT(t)
	svc, err := desiredService(testGuestbook())
	g.Expect(err).NotTo(HaveOccurred())
	expectOwnedChild(g, svc, "gb", "shop")
	g.Expect(svc.Spec.Selector).To(Equal(map[string]string{
		"app.kubernetes.io/name": appName,
		LabelGuestbook:           "gb",
		LabelRole:                RoleActive,
	}))
	g.Expect(svc.Spec.Ports).To(HaveLen(1))
	g.Expect(svc.Spec.Ports[0].TargetPort.StrVal).To(Equal(httpPortName))
}

func TestConfigChecksum(t *testing.T) {
	g := NewWithT(t)
	a := configChecksum(map[string]string{"a": "1", "b": "2"}, nil)
	g.Expect(configChecksum(map[string]string{"b": "2", "a": "1"}, nil)).To(Equal(a))
	g.Expect(configChecksum(map[string]string{"a": "1", "b": "3"}, nil)).NotTo(Equal(a))
	g.Expect(configChecksum(map[string]string{"a": "1b", "": "2"}, nil)).NotTo(Equal(a))
	g.Expect(configChecksum(map[string]string{"a": "1", "b": "2"}, map[string][]byte{"c": {0}})).NotTo(Equal(a))
}
