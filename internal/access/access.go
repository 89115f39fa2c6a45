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

// Package access keeps an object of the operator's kinds from granting more
// than its author's RBAC: at admission, the user who creates or changes an
// Application, Guestbook, Drink or MyCustomResource must themselves be
// allowed to do what the operator will do for the object (create and update
// its children, read the Pod or ConfigMap it names) in the namespace where
// that lands. docs/security.md describes the model.
//
// The decisions come from the API server (SubjectAccessReview) through
// k8s.io/apiserver's delegating authorizer, the one aggregated API servers
// and the metrics endpoint use, which caches them like the API server's
// webhook authorizer; concurrent equal questions share one review
// (merge.go, golang.org/x/sync/singleflight). What is written here is only
// what no library does:
// which checks an object needs (each kind's webhook says), the live switch
// (OperatorConfiguration spec.childAccess) and a refusal that names the
// verb, resource and namespace the user lacks.
package access

import (
	"context"
	"fmt"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	authorizationv1 "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	configv1alpha1 "sunstrider.cn/operator/api/config/v1alpha1"
)

// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

const (
	// AllowTTL and DenyTTL are how long a decision is reused for the same
	// user, groups, extra and check: long enough that a burst of creates by
	// one user costs one review per check, short enough that a revoked or
	// new binding takes effect within seconds.
	AllowTTL, DenyTTL = 10 * time.Second, 2 * time.Second
)

// backoff retries a review the API server did not answer (controller-runtime's
// values, as the metrics endpoint uses), within the webhook's 5 s timeout.
var backoff = wait.Backoff{Duration: 200 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 3}

// Check is one thing the operator will do for an object: Verb on Resource
// (of Group) in Namespace, on the object called Name when set.
type Check struct {
	Verb, Group, Resource, Namespace, Name string
}

// String spells the check for a person: "create deployments.apps in
// namespace team-a", "get pods/friend in namespace team-a".
func (c Check) String() string {
	res := schema.GroupResource{Group: c.Group, Resource: c.Resource}.String()
	if c.Name != "" {
		res += "/" + c.Name
	}
	return fmt.Sprintf("%s %s in namespace %s", c.Verb, res, c.Namespace)
}

// Writes returns the checks of an object whose child of resource (of group)
// the operator creates and keeps up to date in namespace: create and update.
func Writes(group, resource, namespace string) []Check {
	return []Check{
		{Verb: "create", Group: group, Resource: resource, Namespace: namespace},
		{Verb: "update", Group: group, Resource: resource, Namespace: namespace},
	}
}

// Deletes is the check of deleting resource (group) in namespace: what the
// operator does for a parent whose update removes a child.
func Deletes(group, resource, namespace string) Check {
	return Check{Verb: "delete", Group: group, Resource: resource, Namespace: namespace}
}

// Reviewer checks the requesting user of an admission request.
type Reviewer struct {
	authorizer authorizer.UnconditionalAuthorizer
	mode       func() configv1alpha1.ChildAccess
}

// NewReviewer returns a Reviewer asking the API server of cfg, in the mode
// that mode returns at each request (the live settings).
func NewReviewer(cfg *rest.Config, mode func() configv1alpha1.ChildAccess) (*Reviewer, error) {
	client, err := authorizationv1.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the access reviewer's client: %w", err)
	}
	authz, err := authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: client,
		AllowCacheTTL:             AllowTTL,
		DenyCacheTTL:              DenyTTL,
		WebhookRetryBackoff:       &backoff,
	}.New()
	if err != nil {
		return nil, fmt.Errorf("creating the access reviewer: %w", err)
	}
	return &Reviewer{authorizer: &merged{next: authz}, mode: mode}, nil
}

// Review returns nil when the user of the admission request in ctx may do
// every check, or when the mode is Delegated. Otherwise it returns a
// Forbidden error for the object (its resource gr, its kind and name) that
// names the first check the
// user may not do and how to get past it; an error of the API server's is
// returned as such (the webhook fails, and the API server refuses the write
// as its failurePolicy says).
//
// A nil Reviewer checks nothing: the validators' unit tests and fuzzers
// exercise validation alone; the webhooks' Setup functions refuse a nil one.
func (r *Reviewer) Review(ctx context.Context, gr schema.GroupResource, kind, name string, checks []Check) error {
	if !r.Enforcing() || len(checks) == 0 {
		return nil
	}
	req, err := admission.RequestFromContext(ctx)
	if err != nil {
		return fmt.Errorf("checking access for %s %s: %w", gr, name, err)
	}
	u := userOf(req.UserInfo)
	for _, c := range checks {
		decision, reason, err := r.authorizer.Authorize(ctx, authorizer.AttributesRecord{
			User: u, Verb: c.Verb, Namespace: c.Namespace, APIGroup: c.Group, Resource: c.Resource,
			Name: c.Name, ResourceRequest: true,
		})
		if err != nil {
			return apierrors.NewServiceUnavailable(fmt.Sprintf(
				"checking whether %s may %s: %v", u.GetName(), c, err))
		}
		if decision != authorizer.DecisionAllow {
			ctrl.LoggerFrom(ctx).V(1).Info("Refused: the user may not do what the object asks",
				"user", u.GetName(), "check", c.String(), "reason", reason)
			return apierrors.NewForbidden(gr, name, fmt.Errorf(
				"user %q may not %s, which this %s would have the operator do; "+
					"ask for that right (e.g. the built-in edit role in namespace %s), or an administrator can set "+
					"spec.childAccess: Delegated in the OperatorConfiguration (docs/security.md)",
				u.GetName(), c, kind, c.Namespace))
		}
	}
	return nil
}

// Enforcing reports whether Review checks anything now: false for a nil
// Reviewer and in Delegated mode. A validator asks it before a look-up that
// only decides which checks to make, so that Delegated mode costs none.
func (r *Reviewer) Enforcing() bool {
	return r != nil && r.mode() != configv1alpha1.ChildAccessDelegated
}

// userOf is the user of an admission request as the authorizer takes it:
// name, UID, groups and extra, all of which RBAC and other authorizers may
// use.
func userOf(info authnv1.UserInfo) user.Info {
	extra := make(map[string][]string, len(info.Extra))
	for k, v := range info.Extra {
		extra[k] = v
	}
	return &user.DefaultInfo{Name: info.Username, UID: info.UID, Groups: info.Groups, Extra: extra}
}
