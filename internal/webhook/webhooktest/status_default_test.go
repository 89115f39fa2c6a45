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
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"sunstrider.cn/operator/internal/testutil"
)

// drinkVersions are the versions a Drink is served at; the test reads a
// new Drink at each, through the conversion webhook.
var drinkVersions = []string{"v1", "v1beta1", "v1alpha1"}

// TestNewObjectsAreInProgressUntilTheOperatorWritesStatus: no controller
// runs in this suite, so every sample stays as its author created it, as it
// does while the operator is down or behind. kstatus (Flux's health checks,
// Helm's --wait) must then read each kind as InProgress, not Current, which
// it calls an object without any status: the CRDs default the status to
// Ready=Unknown and Reconciling=True, reason Pending. A Drink is read at
// every version: the default is applied at the storage version, and must
// come through the conversion webhook.
func TestNewObjectsAreInProgressUntilTheOperatorWritesStatus(t *testing.T) {
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	root, err := testutil.RepoRoot()
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	for _, file := range []string{
		"apps_v1_application.yaml", "poc_v1_mycustomresource.yaml", "webapp_v1_guestbook.yaml",
		"example_v1_drink.yaml", "example_v1alpha1_drink.yaml", "example_v1beta1_drink.yaml",
		"config_v1alpha1_operatorconfiguration.yaml",
	} {
		t.Run(file, func(t *testing.T) {
			g := NewWithT(t)
			objs := readSamples(g, filepath.Join(root, "config", "samples", file))
			g.Expect(objs).NotTo(BeEmpty())
			for _, obj := range objs {
				createSample(t, g, obj, ns)
				versions := []string{obj.GroupVersionKind().Version}
				if obj.GroupVersionKind().Group == "example.com" {
					versions = drinkVersions
				}
				for _, v := range versions {
					got := &unstructured.Unstructured{}
					got.SetGroupVersionKind(obj.GroupVersionKind().GroupKind().WithVersion(v))
					g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), got)).To(Succeed())
					conditions, _, err := unstructured.NestedSlice(got.Object, "status", "conditions")
					g.Expect(err).NotTo(HaveOccurred())
					g.Expect(conditions).To(ConsistOf(
						pending("Ready", "Unknown"), pending("Reconciling", "True")), "%s %s at %s", obj.GetKind(), obj.GetName(), v)
					res, err := kstatus.Compute(got)
					g.Expect(err).NotTo(HaveOccurred())
					g.Expect(res.Status).To(Equal(kstatus.InProgressStatus), "%s %s at %s", obj.GetKind(), obj.GetName(), v)
					g.Expect(res.Message).To(Equal("Waiting for the operator"))
				}
			}
		})
	}
}

// pending is a condition of the CRDs' default status.
func pending(typ, status string) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": "Pending", "message": "Waiting for the operator",
		"lastTransitionTime": "1970-01-01T00:00:00Z"}
}

// readSamples decodes every object of a multi-document YAML file.
func readSamples(g Gomega, file string) []*unstructured.Unstructured {
	f, err := os.Open(file)
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = f.Close() }()
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	var objs []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		err := dec.Decode(&obj.Object)
		if errors.Is(err, io.EOF) {
			return objs
		}
		g.Expect(err).NotTo(HaveOccurred())
		if len(obj.Object) > 0 {
			objs = append(objs, obj)
		}
	}
}

// createSample creates a sample in ns, or, when its kind is cluster-scoped, under
// its own name (a Guestbook prefixed with ns, the OperatorConfiguration as
// "default", the one name it may have), deleted when the test ends.
func createSample(t *testing.T, g Gomega, obj *unstructured.Unstructured, ns string) {
	namespaced, err := k8sClient.IsObjectNamespaced(obj)
	g.Expect(err).NotTo(HaveOccurred())
	switch {
	case namespaced:
		obj.SetNamespace(ns)
	case obj.GetKind() == "Guestbook":
		obj.SetName(ns + "-" + obj.GetName())
	}
	g.Expect(k8sClient.Create(context.Background(), obj)).To(Succeed())
	if !namespaced {
		t.Cleanup(func() { _ = k8sClient.Delete(context.Background(), obj) })
	}
}
