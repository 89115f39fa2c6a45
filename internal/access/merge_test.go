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
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// TestQuestionKey: two questions share a review only when every part the
// SubjectAccessReview carries is equal.
func TestQuestionKey(t *testing.T) {
	base := func() authorizer.AttributesRecord {
		return authorizer.AttributesRecord{
			User: &user.DefaultInfo{Name: "alice", UID: "1", Groups: []string{"dev", "system:authenticated"},
				Extra: map[string][]string{"scopes": {"a"}, "team": {"x"}}},
			Verb: "create", APIGroup: "apps", Resource: "deployments", Namespace: "team-a", ResourceRequest: true,
		}
	}
	differ := map[string]func(*authorizer.AttributesRecord){
		"user":   func(a *authorizer.AttributesRecord) { a.User.(*user.DefaultInfo).Name = "bob" },
		"uid":    func(a *authorizer.AttributesRecord) { a.User.(*user.DefaultInfo).UID = "2" },
		"groups": func(a *authorizer.AttributesRecord) { a.User.(*user.DefaultInfo).Groups = []string{"dev"} },
		"extra":  func(a *authorizer.AttributesRecord) { a.User.(*user.DefaultInfo).Extra["team"] = []string{"y"} },
		"extra key": func(a *authorizer.AttributesRecord) {
			a.User.(*user.DefaultInfo).Extra = map[string][]string{"scopes": {"a"}}
		},
		"verb":        func(a *authorizer.AttributesRecord) { a.Verb = "update" },
		"group":       func(a *authorizer.AttributesRecord) { a.APIGroup = "" },
		"resource":    func(a *authorizer.AttributesRecord) { a.Resource = "services" },
		"subresource": func(a *authorizer.AttributesRecord) { a.Subresource = "scale" },
		"namespace":   func(a *authorizer.AttributesRecord) { a.Namespace = "team-b" },
		"name":        func(a *authorizer.AttributesRecord) { a.Name = "friend" },
		// A value that would run into the next field if spelled without
		// separators: "team-a" + "" against "team" + "-a".
		"boundaries": func(a *authorizer.AttributesRecord) { a.Namespace, a.Name = "team", "-a" },
	}
	want, err := questionKey(base())
	if err != nil {
		t.Fatal(err)
	}
	same := base()
	same.User = &user.DefaultInfo{Name: "alice", UID: "1", Groups: []string{"dev", "system:authenticated"},
		Extra: map[string][]string{"team": {"x"}, "scopes": {"a"}}}
	if got, err := questionKey(same); err != nil || got != want {
		t.Errorf("an equal question (extra built in another order): key %q, want %q (err %v)", got, want, err)
	}
	for name, change := range differ {
		a := base()
		change(&a)
		got, err := questionKey(a)
		if err != nil {
			t.Fatal(err)
		}
		if got == want {
			t.Errorf("%s changed, key unchanged: %q", name, got)
		}
	}
}
