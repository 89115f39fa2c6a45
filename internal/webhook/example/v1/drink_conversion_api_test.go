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

package v1

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "sunstrider.cn/operator/api/example/v1"
	examplev1alpha1 "sunstrider.cn/operator/api/example/v1alpha1"
	examplev1beta1 "sunstrider.cn/operator/api/example/v1beta1"
	"sunstrider.cn/operator/internal/testutil"
)

// TestDrinkCRDConversionWebhook checks envtest pointed the Drink CRD's
// conversion at the local webhook server, so the other tests go through it.
func TestDrinkCRDConversionWebhook(t *testing.T) {
	g := newG(t)
	var crd apiextensionsv1.CustomResourceDefinition
	g.Expect(k8sClient.Get(context.Background(), client.ObjectKey{Name: "drinks.example.com"}, &crd)).To(Succeed())
	g.Expect(crd.Spec.Conversion.Strategy).To(Equal(apiextensionsv1.WebhookConverter))
	g.Expect(crd.Spec.Conversion.Webhook.ClientConfig.URL).To(HaveValue(HaveSuffix("/convert")))
	g.Expect(crd.Spec.Conversion.Webhook.ClientConfig.URL).To(HaveValue(ContainSubstring(webhookOptions.LocalServingHost)))
	served := make([]string, 0, len(crd.Spec.Versions))
	for _, v := range crd.Spec.Versions {
		served = append(served, v.Name)
		g.Expect(v.Storage).To(Equal(v.Name == "v1"), v.Name)
	}
	g.Expect(served).To(ConsistOf("v1", "v1alpha1", "v1beta1"))
}

// drinkVersions is a Drink as seen in each version.
type drinkVersions struct {
	v1 examplev1.DrinkSpec
	// v1Size is the v1beta1 size annotation of the v1 Drink, "" for none.
	v1Size string
	order  string
	// alphaStash tells the v1alpha1 Drink carries the v1 spec annotation.
	alphaStash bool
	beta       examplev1beta1.DrinkSpec
}

// TestDrinkConversionThroughAPIServer creates Drinks in each version and
// reads them back in every version.
func TestDrinkConversionThroughAPIServer(t *testing.T) {
	ns := testutil.Namespace(t, k8sClient)
	tests := []struct {
		name   string
		create client.Object
		want   drinkVersions
	}{
		{
			name:   "created as v1",
			create: &examplev1.Drink{Spec: examplev1.DrinkSpec{Name: "my-drink", Drink: "coffee"}},
			want: drinkVersions{
				v1:    examplev1.DrinkSpec{Name: "my-drink", Drink: "coffee"},
				order: "coffee for my-drink",
				beta:  examplev1beta1.DrinkSpec{Name: "my-drink", Drink: examplev1beta1.DrinkDetails{Kind: "coffee"}},
			},
		},
		{
			name:   "created as v1 with a drink holding for",
			create: &examplev1.Drink{Spec: examplev1.DrinkSpec{Name: "bob", Drink: "tea for two"}},
			want: drinkVersions{
				v1:         examplev1.DrinkSpec{Name: "bob", Drink: "tea for two"},
				order:      "tea for two for bob",
				alphaStash: true,
				beta:       examplev1beta1.DrinkSpec{Name: "bob", Drink: examplev1beta1.DrinkDetails{Kind: "tea for two"}},
			},
		},
		{
			name:   "created as v1alpha1",
			create: &examplev1alpha1.Drink{Spec: examplev1alpha1.DrinkSpec{Order: "green tea for Table for two"}},
			want: drinkVersions{
				v1:    examplev1.DrinkSpec{Name: "Table for two", Drink: "green tea"},
				order: "green tea for Table for two",
				beta:  examplev1beta1.DrinkSpec{Name: "Table for two", Drink: examplev1beta1.DrinkDetails{Kind: "green tea"}},
			},
		},
		{
			name: "created as v1beta1",
			create: &examplev1beta1.Drink{Spec: examplev1beta1.DrinkSpec{
				Name: "alice", Drink: examplev1beta1.DrinkDetails{Kind: "cocoa", Size: examplev1beta1.SizeLarge}}},
			want: drinkVersions{
				v1:     examplev1.DrinkSpec{Name: "alice", Drink: "cocoa"},
				v1Size: "Large",
				order:  "cocoa for alice",
				beta: examplev1beta1.DrinkSpec{Name: "alice", Drink: examplev1beta1.DrinkDetails{
					Kind: "cocoa", Size: examplev1beta1.SizeLarge}},
			},
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newG(t)
			tt.create.SetNamespace(ns)
			tt.create.SetName("drink-" + string(rune('a'+i)))
			g.Expect(k8sClient.Create(context.Background(), tt.create)).To(Succeed())
			expectVersions(g, client.ObjectKeyFromObject(tt.create), tt.want)
		})
	}
}

// expectVersions reads the Drink at key in every version and expects want.
func expectVersions(g *WithT, key client.ObjectKey, want drinkVersions) {
	ctx := context.Background()
	var hub examplev1.Drink
	g.Expect(k8sClient.Get(ctx, key, &hub)).To(Succeed())
	g.Expect(hub.Spec).To(Equal(want.v1))
	g.Expect(hub.Annotations).NotTo(HaveKey(examplev1alpha1.SpecAnnotation))
	if want.v1Size == "" {
		g.Expect(hub.Annotations).NotTo(HaveKey(examplev1beta1.SizeAnnotation))
	} else {
		g.Expect(hub.Annotations).To(HaveKeyWithValue(examplev1beta1.SizeAnnotation, want.v1Size))
	}

	var alpha examplev1alpha1.Drink
	g.Expect(k8sClient.Get(ctx, key, &alpha)).To(Succeed())
	g.Expect(alpha.Spec.Order).To(Equal(want.order))
	if want.alphaStash {
		g.Expect(alpha.Annotations).To(HaveKey(examplev1alpha1.SpecAnnotation))
	} else {
		g.Expect(alpha.Annotations).NotTo(HaveKey(examplev1alpha1.SpecAnnotation))
	}

	var beta examplev1beta1.Drink
	g.Expect(k8sClient.Get(ctx, key, &beta)).To(Succeed())
	g.Expect(beta.Spec).To(Equal(want.beta))
	g.Expect(beta.Annotations).NotTo(HaveKey(examplev1beta1.SizeAnnotation))
}

// TestDrinkUpdateThroughOlderVersions updates Drinks through a version that
// cannot hold all their fields, and expects none lost.
func TestDrinkUpdateThroughOlderVersions(t *testing.T) {
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)

	t.Run("v1alpha1 keeps a v1 drink holding for", func(t *testing.T) {
		g := newG(t)
		hub := &examplev1.Drink{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "for-two"},
			Spec:       examplev1.DrinkSpec{Name: "bob", Drink: "tea for two"},
		}
		g.Expect(k8sClient.Create(ctx, hub)).To(Succeed())
		key := client.ObjectKeyFromObject(hub)

		var alpha examplev1alpha1.Drink
		g.Expect(k8sClient.Get(ctx, key, &alpha)).To(Succeed())
		alpha.Labels = map[string]string{"edited-by": "v1alpha1"}
		g.Expect(k8sClient.Update(ctx, &alpha)).To(Succeed())

		g.Expect(k8sClient.Get(ctx, key, hub)).To(Succeed())
		g.Expect(hub.Labels).To(HaveKeyWithValue("edited-by", "v1alpha1"))
		g.Expect(hub.Spec).To(Equal(examplev1.DrinkSpec{Name: "bob", Drink: "tea for two"}))
		g.Expect(hub.Annotations).NotTo(HaveKey(examplev1alpha1.SpecAnnotation))

		// Editing the order makes the stashed v1 spec stale: the order wins.
		g.Expect(k8sClient.Get(ctx, key, &alpha)).To(Succeed())
		alpha.Spec.Order = "coffee for bob"
		g.Expect(k8sClient.Update(ctx, &alpha)).To(Succeed())
		g.Expect(k8sClient.Get(ctx, key, hub)).To(Succeed())
		g.Expect(hub.Spec).To(Equal(examplev1.DrinkSpec{Name: "bob", Drink: "coffee"}))
	})

	t.Run("v1 keeps the v1beta1 size", func(t *testing.T) {
		g := newG(t)
		beta := &examplev1beta1.Drink{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sized"},
			Spec: examplev1beta1.DrinkSpec{Name: "alice", Drink: examplev1beta1.DrinkDetails{
				Kind: "tea", Size: examplev1beta1.SizeSmall}},
		}
		g.Expect(k8sClient.Create(ctx, beta)).To(Succeed())
		key := client.ObjectKeyFromObject(beta)

		var hub examplev1.Drink
		g.Expect(k8sClient.Get(ctx, key, &hub)).To(Succeed())
		hub.Spec.Drink = "coffee"
		g.Expect(k8sClient.Update(ctx, &hub)).To(Succeed())
		var alpha examplev1alpha1.Drink
		g.Expect(k8sClient.Get(ctx, key, &alpha)).To(Succeed())
		alpha.Spec.Order = "mocha for alice"
		g.Expect(k8sClient.Update(ctx, &alpha)).To(Succeed())

		g.Expect(k8sClient.Get(ctx, key, beta)).To(Succeed())
		g.Expect(beta.Spec.Drink).To(Equal(examplev1beta1.DrinkDetails{Kind: "mocha", Size: examplev1beta1.SizeSmall}))

		// Clearing the size through v1beta1 drops it from v1.
		beta.Spec.Drink.Size = ""
		g.Expect(k8sClient.Update(ctx, beta)).To(Succeed())
		g.Expect(k8sClient.Get(ctx, key, &hub)).To(Succeed())
		g.Expect(hub.Annotations).NotTo(HaveKey(examplev1beta1.SizeAnnotation))
	})
}

// TestDrinkStatusInEveryVersion writes a status through an older version
// and reads the same conditions in every version.
func TestDrinkStatusInEveryVersion(t *testing.T) {
	g := newG(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	alpha := &examplev1alpha1.Drink{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "status"},
		Spec:       examplev1alpha1.DrinkSpec{Order: "coffee for status"},
	}
	g.Expect(k8sClient.Create(ctx, alpha)).To(Succeed())
	status := examplev1alpha1.DrinkStatus{ObservedGeneration: alpha.Generation, ConfigMapName: "status"}
	for _, c := range []string{examplev1.ConditionConfigMapSynced, examplev1.ConditionReady} {
		meta.SetStatusCondition(&status.Conditions, metav1.Condition{
			Type: c, Status: metav1.ConditionTrue, Reason: examplev1.ReasonSynced, Message: "in sync",
			ObservedGeneration: alpha.Generation, LastTransitionTime: metav1.NewTime(time.Unix(1700000000, 0)),
		})
	}
	alpha.Status = status
	g.Expect(k8sClient.Status().Update(ctx, alpha)).To(Succeed())

	key := client.ObjectKeyFromObject(alpha)
	var hub examplev1.Drink
	g.Expect(k8sClient.Get(ctx, key, &hub)).To(Succeed())
	g.Expect(hub.Status).To(Equal(examplev1.DrinkStatus(status)))
	var beta examplev1beta1.Drink
	g.Expect(k8sClient.Get(ctx, key, &beta)).To(Succeed())
	g.Expect(beta.Status).To(Equal(examplev1beta1.DrinkStatus(status)))
}

// TestDrinkSamples creates the Drink samples of every version and expects
// each stored as the v1 Drink its comment tells.
func TestDrinkSamples(t *testing.T) {
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	root, err := testutil.RepoRoot()
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	tests := []struct {
		file     string
		want     examplev1.DrinkSpec
		wantSize string
	}{
		{file: "example_v1_drink.yaml", want: examplev1.DrinkSpec{Name: "my-drink", Drink: "coffee"}},
		{file: "example_v1alpha1_drink.yaml", want: examplev1.DrinkSpec{Name: "my-drink", Drink: "coffee"}},
		{file: "example_v1beta1_drink.yaml", want: examplev1.DrinkSpec{Name: "my-drink", Drink: "tea"}, wantSize: "Large"},
	}
	decoder := serializer.NewCodecFactory(scheme).UniversalDeserializer()
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			g := newG(t)
			data, err := os.ReadFile(filepath.Join(root, "config", "samples", tt.file))
			g.Expect(err).NotTo(HaveOccurred())
			obj, _, err := decoder.Decode(data, nil, nil)
			g.Expect(err).NotTo(HaveOccurred())
			sample := obj.(client.Object)
			sample.SetNamespace(ns)
			g.Expect(k8sClient.Create(ctx, sample)).To(Succeed())
			var hub examplev1.Drink
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(sample), &hub)).To(Succeed())
			g.Expect(hub.Spec).To(Equal(tt.want))
			if tt.wantSize != "" {
				g.Expect(hub.Annotations).To(HaveKeyWithValue(examplev1beta1.SizeAnnotation, tt.wantSize))
			}
		})
	}
}
