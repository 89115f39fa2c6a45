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

package example

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "sunstrider.cn/operator/api/example/v1"
	"sunstrider.cn/operator/internal/testutil"
)

// TestDrinkConformance runs the behaviour every kind shares
// (testutil.Conformance) against the Drink and its one child, its
// ConfigMap, in one namespace. Its Restart case runs
// drinkZeroWritesAtSteadyState too.
func TestDrinkConformance(t *testing.T) {
	ns := testutil.Namespace(t, suite.Client)
	testutil.Conformance(t, testutil.ConformanceKind{
		Suite:      suite,
		Controller: ControllerName,
		New: func(name string) client.Object {
			return &examplev1.Drink{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec:       examplev1.DrinkSpec{Name: "Conformance", Drink: "tea"},
			}
		},
		Children: []testutil.ConformanceChild{{
			Kind: "ConfigMap",
			Child: func(parent client.Object) (client.ObjectKey, client.Object) {
				return client.ObjectKeyFromObject(parent), &corev1.ConfigMap{}
			},
			Foreign: func(key client.ObjectKey) client.Object {
				return &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
					Data:       map[string]string{"theirs": "yes"},
				}
			},
			Change: func(parent client.Object) { parent.(*examplev1.Drink).Spec.Drink = "coffee" },
			Changed: func(g Gomega, child client.Object) {
				g.Expect(child.(*corev1.ConfigMap).Data).To(HaveKeyWithValue(configMapKeyDrink, "coffee"))
			},
			Tamper: func(child client.Object) { child.(*corev1.ConfigMap).Data[configMapKeyDrink] = "tampered" },
			Field:  func(child client.Object) string { return child.(*corev1.ConfigMap).Data[configMapKeyDrink] },
			Reported: func(g Gomega, parent client.Object) {
				g.Expect(parent.(*examplev1.Drink).Status.ConfigMapName).To(Equal(parent.GetName()))
			},
		}},
		Restarted:   func() { writes = suite.Writes },
		SteadyState: drinkZeroWritesAtSteadyState,
	})
}
