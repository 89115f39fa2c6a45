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

package access

import (
	"context"
	"fmt"

	"k8s.io/apiserver/pkg/authorization/authorizer"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// DelegateVerb is the verb on operatorconfigurations (config.sunstrider.cn)
// that changing an OperatorConfiguration's spec.childAccess needs, beyond
// update. It is a verb of its own so that no role grants it by accident:
// OLM folds an owned CRD's resources into the built-in admin and edit
// roles, whose update on operatorconfigurations would otherwise let anyone
// with a cluster-wide edit binding switch every tenant to Delegated. No
// role of the operator's aggregates it (config/rbac); cluster-admin's
// wildcard has it.
const DelegateVerb = "delegate"

// Allowed tells whether the user of the admission request in ctx may do
// c, whatever spec.childAccess says (it is not a check of a child), and
// the user's name for a refusal. An error is the API server's: the
// webhook fails, and the API server refuses the write as its
// failurePolicy says. A nil Reviewer allows everything, as Review does
// (the validators' unit tests).
func (r *Reviewer) Allowed(ctx context.Context, c Check) (allowed bool, user string, err error) {
	if r == nil {
		return true, "", nil
	}
	req, err := admission.RequestFromContext(ctx)
	if err != nil {
		return false, "", fmt.Errorf("checking access: %w", err)
	}
	u := userOf(req.UserInfo)
	decision, _, err := r.authorizer.Authorize(ctx, authorizer.AttributesRecord{
		User: u, Verb: c.Verb, Namespace: c.Namespace, APIGroup: c.Group, Resource: c.Resource,
		Name: c.Name, ResourceRequest: true,
	})
	if err != nil {
		return false, u.GetName(), fmt.Errorf("checking whether %s may %s %s.%s: %w", u.GetName(), c.Verb, c.Resource, c.Group, err)
	}
	return decision == authorizer.DecisionAllow, u.GetName(), nil
}
