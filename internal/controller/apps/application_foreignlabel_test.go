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

package apps

import (
	"context"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	"sunstrider.cn/operator/internal/apply"
	"sunstrider.cn/operator/internal/testutil"
)

// A Deployment someone labelled as the operator's (the label alone makes
// no child: anyone may set it) is cached as its metadata, without its spec
// or annotations (machinery.ForeignMetadataTransform), and is still the
// conflict it was: reported, never written over.
func TestLabelledForeignDeploymentIsCachedAsMetadataAndNeverOverwritten(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	foreign := foreignDeployment(ns)
	foreign.Labels = map[string]string{apply.ManagedByLabel: apply.ManagedByValue}
	foreign.Annotations = map[string]string{"note": strings.Repeat("n", 64<<10)}
	g.Expect(k8sClient.Create(ctx, foreign)).To(Succeed())
	rv := foreign.ResourceVersion

	app := seedSample(ns)
	g.Expect(k8sClient.Create(ctx, app)).To(Succeed())
	expectDeploymentConflict(g, app)

	// What the controller read: the foreign Deployment as its metadata.
	cached := &appsv1.Deployment{}
	g.Eventually(func() error {
		return suite.Cache.Get(ctx, client.ObjectKeyFromObject(foreign), cached)
	}).Should(Succeed())
	g.Expect(cached.UID).To(Equal(foreign.UID))
	g.Expect(cached.ResourceVersion).To(Equal(rv))
	g.Expect(cached.Labels).To(Equal(foreign.Labels))
	g.Expect(cached.Annotations).To(BeNil())
	g.Expect(cached.Spec).To(Equal(appsv1.DeploymentSpec{}))

	// Untouched, also by a reconcile after the conflict was reported.
	mark := suite.Reconciles.Mark()
	g.Expect(testutil.Nudge(ctx, k8sClient, app)).To(Succeed())
	suite.ExpectReconciled(g, mark, applicationController, client.ObjectKeyFromObject(app))
	live := getDeployment(g, app)
	g.Expect(live.ResourceVersion).To(Equal(rv))
	g.Expect(live.OwnerReferences).To(BeEmpty())
	g.Expect(live.Spec.Template.Spec.Containers[0].Image).To(Equal("busybox"))
	g.Expect(readyCond(g, app).Reason).To(Equal(sunappsv1.ReasonResourceConflict))
}
