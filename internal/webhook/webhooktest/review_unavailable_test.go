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
	"net/http"
	"testing"

	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	configv1alpha1 "sunstrider.cn/operator/api/config/v1alpha1"
	"sunstrider.cn/operator/internal/access"
)

// TestAccessReviewThatCannotBeAnsweredIsServiceUnavailable: when the API
// server does not answer the SubjectAccessReview (here it refuses it: the
// reviewer's identity may not create one), the check neither allows nor
// refuses the user: the webhook answers 503, naming the check, and the API
// server applies the webhook's failurePolicy (Fail: the write is refused,
// to be retried).
func TestAccessReviewThatCannotBeAnsweredIsServiceUnavailable(t *testing.T) {
	g := NewWithT(t)
	cfg := rest.CopyConfig(restConfig)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "no-access-reviews"}
	reviewer, err := access.NewReviewer(cfg, func() configv1alpha1.ChildAccess { return configv1alpha1.ChildAccessRequester })
	g.Expect(err).NotTo(HaveOccurred())

	ctx := admission.NewContextWithRequest(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UserInfo: authenticationv1.UserInfo{Username: "alice"},
	}})
	err = reviewer.Review(ctx, schema.GroupResource{Group: "apps.sunstrider.cn", Resource: "applications"}, "Application",
		"web", []access.Check{{Verb: "create", Group: "apps", Resource: "deployments", Namespace: "team-a"}})
	g.Expect(apierrors.IsServiceUnavailable(err)).To(BeTrue(), "want 503, got %v", err)
	g.Expect(err.(apierrors.APIStatus).Status().Code).To(Equal(int32(http.StatusServiceUnavailable)))
	g.Expect(err.Error()).To(ContainSubstring("checking whether alice may create deployments.apps in namespace team-a"))

	// The same check, answered: the reviewer of the suite (an administrator's
	// identity) refuses alice, who has no rights, as Forbidden.
	err = reviewerOfSuite(t).Review(ctx, schema.GroupResource{Group: "apps.sunstrider.cn", Resource: "applications"},
		"Application", "web", []access.Check{{Verb: "create", Group: "apps", Resource: "deployments", Namespace: "team-a"}})
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want 403, got %v", err)
}

// reviewerOfSuite returns a Reviewer asking as the suite's administrator.
func reviewerOfSuite(t *testing.T) *access.Reviewer {
	t.Helper()
	r, err := access.NewReviewer(restConfig, func() configv1alpha1.ChildAccess { return configv1alpha1.ChildAccessRequester })
	if err != nil {
		t.Fatal(err)
	}
	return r
}
