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

package config

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "sunstrider.cn/operator/api/config/v1alpha1"
	"sunstrider.cn/operator/internal/testutil"
)

// conformanceImage is the guestbook image of the OperatorConfiguration
// TestOperatorConfigurationConformance makes: a setting it puts in effect.
const conformanceImage = "example.com/guestbook:conformance"

// TestOperatorConfigurationConformance runs the behaviour every kind shares
// (testutil.Conformance) against the OperatorConfiguration. It writes no
// child, so its table has the cases of a kind without children: Restart,
// Deletion, Invariants. The operator reads only the one named default: the
// cases make it one after the other, whatever name they ask for. A deleted
// configuration keeps the settings in effect (the controller's Gone).
func TestOperatorConfigurationConformance(t *testing.T) {
	g := newG(t)
	ctx := context.Background()
	resetAtEnd(t)
	// Each case creates its own.
	err := k8sClient.Delete(ctx, &configv1alpha1.OperatorConfiguration{ObjectMeta: metav1.ObjectMeta{Name: ConfigurationKey.Name}})
	g.Expect(client.IgnoreNotFound(err)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8sClient.Get(ctx, ConfigurationKey, &configv1alpha1.OperatorConfiguration{}))
	}).Should(BeTrue())

	testutil.Conformance(t, testutil.ConformanceKind{
		Suite:      suite,
		Controller: ControllerName,
		New: func(string) client.Object {
			return &configv1alpha1.OperatorConfiguration{
				ObjectMeta: metav1.ObjectMeta{Name: ConfigurationKey.Name},
				Spec:       configv1alpha1.OperatorConfigurationSpec{GuestbookImage: conformanceImage},
			}
		},
		AfterDeletion: func(g Gomega, _ client.Object) {
			g.Expect(holder.Load().GuestbookImage).To(Equal(conformanceImage), "the settings in effect stay")
		},
	})
}
