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
	"encoding/json"
	"fmt"

	"golang.org/x/sync/singleflight"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// merged asks next one question at a time: callers asking the same
// question (same user, groups, extra and check) while it is in flight share
// its answer. The delegating authorizer caches a decision only once its
// review returns, so without this a burst of creates by one user, arriving
// together on a cold or just-expired cache entry, sends one review per
// object. golang.org/x/sync/singleflight does the merging; what is written
// here is only the key.
type merged struct {
	next  authorizer.UnconditionalAuthorizer
	group singleflight.Group
}

type decision struct {
	decision authorizer.Decision
	reason   string
}

// Authorize answers a through next, once for all concurrent callers with an
// equal question. The review runs with the first caller's context, so its
// cancellation (the webhook's timeout) ends the others' wait too, as it
// would have ended their own reviews.
func (m *merged) Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	key, err := questionKey(a)
	if err != nil {
		return authorizer.DecisionNoOpinion, "", err
	}
	v, err, _ := m.group.Do(key, func() (any, error) {
		d, reason, err := m.next.Authorize(ctx, a)
		return decision{d, reason}, err
	})
	d := v.(decision)
	return d.decision, d.reason, err
}

// question is what a SubjectAccessReview of the checks in this package
// asks: two equal questions get the same answer.
type question struct {
	User       string              `json:"u"`
	UID        string              `json:"i"`
	Groups     []string            `json:"g"`
	Extra      map[string][]string `json:"e"`
	Verb       string              `json:"v"`
	Version    string              `json:"av"`
	Group      string              `json:"ag"`
	Resource   string              `json:"r"`
	Sub        string              `json:"s"`
	NS         string              `json:"n"`
	Name       string              `json:"o"`
	IsResource bool                `json:"rr"`
	Path       string              `json:"p"`
}

// questionKey spells a as a string: JSON, so that no value can run into
// the next field (encoding/json also sorts the extra's keys).
func questionKey(a authorizer.Attributes) (string, error) {
	q := question{
		Verb: a.GetVerb(), Version: a.GetAPIVersion(), Group: a.GetAPIGroup(), Resource: a.GetResource(), Sub: a.GetSubresource(),
		NS: a.GetNamespace(), Name: a.GetName(), IsResource: a.IsResourceRequest(), Path: a.GetPath(),
	}
	if u := a.GetUser(); u != nil {
		q.User, q.UID, q.Groups, q.Extra = u.GetName(), u.GetUID(), u.GetGroups(), u.GetExtra()
	}
	b, err := json.Marshal(q)
	if err != nil {
		return "", fmt.Errorf("spelling the access question: %w", err)
	}
	return string(b), nil
}
