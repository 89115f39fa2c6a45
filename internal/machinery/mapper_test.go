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

package machinery

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// countingMapper counts the RESTMapping calls that reach a RESTMapper.
type countingMapper struct {
	meta.RESTMapper
	calls int
}

func (c *countingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	c.calls++
	return c.RESTMapper.RESTMapping(gk, versions...)
}

func TestMemoizeMappingsAsksOncePerKindAndVersion(t *testing.T) {
	application := schema.GroupVersionKind{Group: "apps.sunstrider.cn", Version: "v1", Kind: "Application"}
	guestbook := schema.GroupVersionKind{Group: "webapp.my.domain", Version: "v1", Kind: "Guestbook"}
	drink := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Drink"}
	drinkV2 := drink.GroupKind().WithVersion("v2")
	// Drink's preferred version is v1 (the first of its group given).
	base := meta.NewDefaultRESTMapper([]schema.GroupVersion{drink.GroupVersion(), drinkV2.GroupVersion()})
	base.Add(application, meta.RESTScopeNamespace)
	base.Add(guestbook, meta.RESTScopeRoot)
	base.Add(drink, meta.RESTScopeNamespace)
	base.Add(drinkV2, meta.RESTScopeNamespace)

	cases := []struct {
		name     string
		gk       schema.GroupKind
		versions []string
		// calls is how many of three lookups reach the wrapped mapper.
		calls int
		scope meta.RESTScopeName
		err   bool
	}{
		{name: "a namespaced kind in one version", gk: application.GroupKind(), versions: []string{"v1"}, calls: 1, scope: meta.RESTScopeNameNamespace},
		{name: "a cluster-scoped kind", gk: guestbook.GroupKind(), versions: []string{"v1"}, calls: 1, scope: meta.RESTScopeNameRoot},
		{name: "the preferred version is asked every time", gk: drink.GroupKind(), calls: 3, scope: meta.RESTScopeNameNamespace},
		{name: "an empty version is the preferred one", gk: drink.GroupKind(), versions: []string{""}, calls: 3, scope: meta.RESTScopeNameNamespace},
		{name: "several versions are asked every time", gk: drink.GroupKind(), versions: []string{"v2", "v1"}, calls: 3, scope: meta.RESTScopeNameNamespace},
		{name: "an unknown kind is not remembered", gk: schema.GroupKind{Group: "example.com", Kind: "Food"}, versions: []string{"v1"}, calls: 3, err: true},
		{name: "an unknown version is not remembered", gk: drink.GroupKind(), versions: []string{"v3"}, calls: 3, err: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			counting := &countingMapper{RESTMapper: base}
			mapper := MemoizeMappings(counting)
			for range 3 {
				got, err := mapper.RESTMapping(c.gk, c.versions...)
				want, wantErr := base.RESTMapping(c.gk, c.versions...)
				if c.err {
					if err == nil || !meta.IsNoMatchError(err) || wantErr == nil {
						t.Fatalf("RESTMapping = %v, %v; want the wrapped mapper's NoMatch error", got, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("RESTMapping: %v", err)
				}
				if *got != *want {
					t.Fatalf("RESTMapping = %+v, want the wrapped mapper's %+v", *got, *want)
				}
				if got.Scope.Name() != c.scope {
					t.Fatalf("scope %q, want %q", got.Scope.Name(), c.scope)
				}
				// A caller that changes its answer changes no later one.
				got.Resource.Resource = "changed"
			}
			if counting.calls != c.calls {
				t.Fatalf("the wrapped mapper was asked %d times, want %d", counting.calls, c.calls)
			}
		})
	}
}

func TestMemoizeMappingsPassesTheOtherCallsThrough(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "apps.sunstrider.cn", Version: "v1", Kind: "Application"}
	base := meta.NewDefaultRESTMapper(nil)
	base.Add(gvk, meta.RESTScopeNamespace)
	mapper := MemoizeMappings(base)
	got, err := mapper.KindFor(schema.GroupVersionResource{Group: gvk.Group, Version: gvk.Version, Resource: "applications"})
	if err != nil || got != gvk {
		t.Fatalf("KindFor = %v, %v; want %v", got, err, gvk)
	}
}
