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

package webhooktest

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	examplev1 "sunstrider.cn/operator/api/example/v1"
	pocv1 "sunstrider.cn/operator/api/poc/v1"
	webappv1 "sunstrider.cn/operator/api/webapp/v1"
)

// The names of the validating webhooks, as in config/webhook/manifests.yaml.
const (
	applicationWebhook = "vapplication-v1.sunstrider.cn"
	drinkWebhook       = "vdrink-v1.example.com"
)

// validApplication returns an Application every rule accepts: a selector,
// matching template labels, one container and one named port.
func validApplication(ns, name string) *sunappsv1.Application {
	return &sunappsv1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: sunappsv1.ApplicationSpec{
			Deployment: sunappsv1.DeploymentTemplate{
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
				},
			},
			Service: sunappsv1.ServiceTemplate{ServiceSpec: corev1.ServiceSpec{
				Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}},
			}},
		},
	}
}

// minimalApplication returns an Application with only a container: no
// selector, labels, replicas or ports.
func minimalApplication(ns, name string) *sunappsv1.Application {
	return &sunappsv1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: sunappsv1.ApplicationSpec{Deployment: sunappsv1.DeploymentTemplate{
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}}},
		}},
	}
}

func validMyCustomResource(ns, name string) *pocv1.MyCustomResource {
	return &pocv1.MyCustomResource{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       pocv1.MyCustomResourceSpec{Name: "friend-0"},
	}
}

// validGuestbook returns a Guestbook; Guestbooks are cluster-scoped, so ns
// only makes name unique across tests.
func validGuestbook(ns, name string) *webappv1.Guestbook {
	return &webappv1.Guestbook{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name},
		Spec:       webappv1.GuestbookSpec{Size: 2, ConfigMapName: "gb-config", Type: webappv1.AliasName, Namespace: "team-a"},
	}
}

func validDrink(ns, name string) *examplev1.Drink {
	return &examplev1.Drink{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       examplev1.DrinkSpec{Name: "Morning", Drink: "green tea"},
	}
}
