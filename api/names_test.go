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

// Package api_test checks what the operator's CRDs call themselves on a
// shared cluster.
package api_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// takenNames are names kubectl resolves to a well-known project's kind, or
// to a built-in one: a CRD that also claims one makes `kubectl get <name>`
// pick one of the two. Argo CD (app, apps, appproj, appset), Istio (dr, vs,
// gw, se, pa, ra, sidecar), Flux (hr, ks, gitrepo, helmrepo, ocirepo),
// cert-manager (cert, certs, cr, issuer), Knative (ksvc, kn), KubeVela
// (app), Crossplane (xrd), Prometheus Operator (prom, smon, pmon, am),
// Tekton (tr, pr, tk), and Kubernetes' own short names.
var takenNames = []string{
	"app", "apps", "appproj", "appset",
	"dr", "vs", "gw", "se", "pa", "ra", "sidecar",
	"hr", "ks", "gitrepo", "helmrepo", "ocirepo",
	"cert", "certs", "cr", "issuer",
	"ksvc", "kn", "xrd", "prom", "smon", "pmon", "am", "tr", "pr", "tk",
	"po", "svc", "deploy", "cm", "ds", "sts", "rs", "rc", "ns", "no", "pv", "pvc", "sa", "ep",
	"ev", "ing", "netpol", "pdb", "psp", "crd", "crds", "hpa", "cj", "csr", "limits", "quota", "sc", "pc",
}

// TestCRDNamesDoNotCollide: no shortName of the operator's CRDs is a
// well-known project's or a built-in kind's, and every CRD is in the
// sunstrider category (`kubectl get sunstrider` lists every kind).
func TestCRDNamesDoNotCollide(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "config", "crd", "bases", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 5 {
		t.Fatalf("want the 5 CRDs of config/crd/bases, found %d: %v", len(files), files)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		crd := &apiextv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(data, crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		names := crd.Spec.Names
		for _, short := range names.ShortNames {
			if slices.Contains(takenNames, short) {
				t.Errorf("%s: shortName %q is already another kind's on many clusters", crd.Name, short)
			}
		}
		if !slices.Contains(names.Categories, "sunstrider") {
			t.Errorf("%s: categories %v lack sunstrider", crd.Name, names.Categories)
		}
	}
}
