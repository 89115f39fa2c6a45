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
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admission/v1"
	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	configv1alpha1 "sunstrider.cn/operator/api/config/v1alpha1"
	"sunstrider.cn/operator/internal/access"
	"sunstrider.cn/operator/internal/testutil"
)

// TestABurstOfEqualChecksSendsOneReviewEach: twenty creates arriving
// together from two users, on a reviewer whose cache is cold, make one
// SubjectAccessReview per distinct question (user and check), counted on
// the wire, and each caller gets its own user's answer.
func TestABurstOfEqualChecksSendsOneReviewEach(t *testing.T) {
	g := NewWithT(t)
	ns := testutil.Namespace(t, k8sClient)
	bindEdit(t, "burst-edit", ns)
	// The binding must have reached the API server's authorizer first, or
	// the burst could see both answers for one user (asked directly, so the
	// reviewer under test stays cold).
	g.Eventually(func(g Gomega) {
		sar := &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
			User: "burst-edit", Groups: []string{"system:authenticated"},
			ResourceAttributes: &authzv1.ResourceAttributes{Verb: "update", Group: "apps", Resource: "deployments", Namespace: ns},
		}}
		g.Expect(k8sClient.Create(context.Background(), sar)).To(Succeed())
		g.Expect(sar.Status.Allowed).To(BeTrue())
	}).WithTimeout(10 * time.Second).Should(Succeed())

	var reviews atomic.Int32
	cfg := rest.CopyConfig(restConfig)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return testutil.RoundTripperFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/subjectaccessreviews") {
				reviews.Add(1)
			}
			return rt.RoundTrip(r)
		})
	})
	reviewer, err := access.NewReviewer(cfg, func() configv1alpha1.ChildAccess { return configv1alpha1.ChildAccessRequester })
	g.Expect(err).NotTo(HaveOccurred())

	const burst = 20
	gr := schema.GroupResource{Group: "apps.sunstrider.cn", Resource: "applications"}
	start := make(chan struct{})
	errs := make([]error, burst)
	var wg sync.WaitGroup
	for i := range burst {
		user := []string{"burst-edit", "burst-none"}[i%2]
		ctx := admission.NewContextWithRequest(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
			UserInfo: authnv1.UserInfo{Username: user, Groups: []string{"system:authenticated"}},
		}})
		wg.Go(func() {
			<-start
			errs[i] = reviewer.Review(ctx, gr, "Application", fmt.Sprintf("app-%d", i), access.Writes("apps", "deployments", ns))
		})
	}
	close(start)
	wg.Wait()

	for i, err := range errs {
		if i%2 == 0 {
			g.Expect(err).NotTo(HaveOccurred(), "burst-edit's create %d", i)
			continue
		}
		g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "burst-none's create %d: want Forbidden, got %v", i, err)
		g.Expect(err.Error()).To(ContainSubstring(`user "burst-none" may not create deployments.apps in namespace ` + ns))
	}
	// burst-edit: create and update, both allowed; burst-none: create,
	// refused, which ends its checks.
	g.Expect(reviews.Load()).To(BeEquivalentTo(3), "SubjectAccessReviews sent for %d creates", burst)
}
