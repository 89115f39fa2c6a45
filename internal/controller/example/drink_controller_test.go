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

package example

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "sunstrider.cn/operator/api/example/v1"
	"sunstrider.cn/operator/internal/apply"
	controllers "sunstrider.cn/operator/internal/controller"
	"sunstrider.cn/operator/internal/testutil"
)

// testDrink names the Drinks (and ConfigMaps) of the tests that need one.
const testDrink = "order"

func newDrink(ns, name, drinkName, drink string) *examplev1.Drink {
	return &examplev1.Drink{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       examplev1.DrinkSpec{Name: drinkName, Drink: drink},
	}
}

// sampleDrink reads config/samples/example_v1_drink.yaml.
func sampleDrink(g *WithT) *examplev1.Drink {
	root, err := testutil.RepoRoot()
	g.Expect(err).NotTo(HaveOccurred())
	f, err := os.Open(filepath.Join(root, "config", "samples", "example_v1_drink.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = f.Close() }()
	var drink examplev1.Drink
	g.Expect(utilyaml.NewYAMLOrJSONDecoder(f, 4096).Decode(&drink)).To(Succeed())
	return &drink
}

// expectReady waits until the Drink at key reports Ready with the given
// status and reason for its current generation, and returns it.
func expectReady(g *WithT, key types.NamespacedName, status metav1.ConditionStatus, reason string) *examplev1.Drink {
	var drink examplev1.Drink
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(context.Background(), key, &drink)).To(Succeed())
		g.Expect(drink.Status.ObservedGeneration).To(Equal(drink.Generation))
		for _, condType := range []string{examplev1.ConditionReady, examplev1.ConditionConfigMapSynced} {
			c := meta.FindStatusCondition(drink.Status.Conditions, condType)
			g.Expect(c).NotTo(BeNil(), condType)
			g.Expect(c.Status).To(Equal(status), condType)
			g.Expect(c.Reason).To(Equal(reason), condType)
			g.Expect(c.ObservedGeneration).To(Equal(drink.Generation), condType)
		}
	}).Should(Succeed())
	return &drink
}

// expectConfigMap waits until the Drink's ConfigMap holds the given data and
// is controlled by the Drink, and returns it.
func expectConfigMap(g *WithT, drink *examplev1.Drink, name, kind string) *corev1.ConfigMap {
	var cm corev1.ConfigMap
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(context.Background(), client.ObjectKeyFromObject(drink), &cm)).To(Succeed())
		g.Expect(cm.Data).To(Equal(map[string]string{configMapKeyName: name, configMapKeyDrink: kind}))
		g.Expect(cm.Labels).To(HaveKeyWithValue(apply.ManagedByLabel, apply.ManagedByValue))
		g.Expect(cm.Annotations).To(HaveKey(apply.HashAnnotation))
		ref := metav1.GetControllerOf(&cm)
		g.Expect(ref).NotTo(BeNil())
		g.Expect(ref.UID).To(Equal(drink.UID))
		g.Expect(ref.Kind).To(Equal(drinkKind))
		g.Expect(ref.APIVersion).To(Equal(examplev1.GroupVersion.String()))
		g.Expect(ref.BlockOwnerDeletion).To(HaveValue(BeTrue()))
	}).Should(Succeed())
	return &cm
}

// eventReasons returns the reasons of the events about the named object.
func eventReasons(g Gomega, ns, regarding string) []string {
	events := eventsAbout(g, ns, regarding)
	reasons := make([]string, 0, len(events))
	for _, e := range events {
		reasons = append(reasons, e.Reason)
	}
	return reasons
}

// eventsAbout returns the events about the named object.
func eventsAbout(g Gomega, ns, regarding string) []eventsv1.Event {
	var list eventsv1.EventList
	g.Expect(k8sClient.List(context.Background(), &list, client.InNamespace(ns))).To(Succeed())
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Name == regarding {
			out = append(out, e)
		}
	}
	return out
}

// expectEmitted expects the events about the named object to be want, by
// reason, each emitted as often as want says (testutil.ExpectEmissions: a
// repeat on an unchanged object is a series, not a second Event).
func expectEmitted(g Gomega, ns, regarding string, want map[string]int32) {
	testutil.ExpectEmissions(g, suite.Writes, func(g Gomega) []eventsv1.Event { return eventsAbout(g, ns, regarding) },
		testutil.ByReason, want)
}

func expectEvent(g *WithT, ns, regarding, reason string) {
	g.Eventually(func(g Gomega) []string { return eventReasons(g, ns, regarding) }).
		Should(ContainElement(reason))
}

func TestDrinkSampleCreatesConfigMap(t *testing.T) {
	g := newG(t)
	ns := testutil.Namespace(t, k8sClient)
	drink := sampleDrink(g)
	g.Expect(drink.Name).To(Equal("example-drink"))
	drink.Namespace = ns
	g.Expect(k8sClient.Create(context.Background(), drink)).To(Succeed())

	got := expectReady(g, client.ObjectKeyFromObject(drink), metav1.ConditionTrue, examplev1.ReasonSynced)
	g.Expect(got.Status.ConfigMapName).To(Equal("example-drink"))
	expectConfigMap(g, drink, "my-drink", "coffee")
}

func TestDrinkSpecChangeUpdatesConfigMap(t *testing.T) {
	g := newG(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	drink := newDrink(ns, testDrink, "morning", "coffee")
	g.Expect(k8sClient.Create(ctx, drink)).To(Succeed())
	expectReady(g, client.ObjectKeyFromObject(drink), metav1.ConditionTrue, examplev1.ReasonSynced)
	before := expectConfigMap(g, drink, "morning", "coffee")

	patch := client.MergeFrom(drink.DeepCopy())
	drink.Spec.Drink = "tea"
	g.Expect(k8sClient.Patch(ctx, drink, patch)).To(Succeed())
	got := expectReady(g, client.ObjectKeyFromObject(drink), metav1.ConditionTrue, examplev1.ReasonSynced)
	g.Expect(got.Status.ObservedGeneration).To(Equal(int64(2)))
	after := expectConfigMap(g, drink, "morning", "tea")
	g.Expect(after.UID).To(Equal(before.UID))
	g.Expect(after.Annotations[apply.HashAnnotation]).NotTo(Equal(before.Annotations[apply.HashAnnotation]))
	// The shared Normal event for the update, once; the create was only
	// logged.
	expectEmitted(g, ns, drink.Name, map[string]int32{controllers.ReasonUpdated: 1})
}

func TestDrinkRestoresEditedConfigMap(t *testing.T) {
	g := newG(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	drink := newDrink(ns, testDrink, "afternoon", "tea")
	g.Expect(k8sClient.Create(ctx, drink)).To(Succeed())
	cm := expectConfigMap(g, drink, "afternoon", "tea")

	// A hand edit, as kubectl edit would make it (an update by another manager).
	cm.Data[configMapKeyDrink] = "water"
	delete(cm.Data, configMapKeyName)
	g.Expect(k8sClient.Update(ctx, cm, client.FieldOwner("kubectl-edit"))).To(Succeed())

	restored := expectConfigMap(g, drink, "afternoon", "tea")
	g.Expect(restored.UID).To(Equal(cm.UID))
	expectReady(g, client.ObjectKeyFromObject(drink), metav1.ConditionTrue, examplev1.ReasonSynced)
}

func TestDrinkRecreatesDeletedConfigMap(t *testing.T) {
	g := newG(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	drink := newDrink(ns, testDrink, "evening", "cocoa")
	g.Expect(k8sClient.Create(ctx, drink)).To(Succeed())
	cm := expectConfigMap(g, drink, "evening", "cocoa")

	g.Expect(k8sClient.Delete(ctx, cm)).To(Succeed())
	g.Eventually(func(g Gomega) {
		var again corev1.ConfigMap
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(cm), &again)).To(Succeed())
		g.Expect(again.UID).NotTo(Equal(cm.UID))
	}).Should(Succeed())
	expectConfigMap(g, drink, "evening", "cocoa")
	expectReady(g, client.ObjectKeyFromObject(drink), metav1.ConditionTrue, examplev1.ReasonSynced)
}

func TestDrinkLeavesForeignConfigMapAlone(t *testing.T) {
	g := newG(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	foreign := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: testDrink},
		Data:       map[string]string{"owner": "someone else"},
	}
	g.Expect(k8sClient.Create(ctx, foreign)).To(Succeed())

	drink := newDrink(ns, testDrink, "night", "milk")
	key := client.ObjectKeyFromObject(drink)
	g.Expect(k8sClient.Create(ctx, drink)).To(Succeed())
	got := expectReady(g, key, metav1.ConditionFalse, examplev1.ReasonResourceConflict)
	g.Expect(got.Status.ConfigMapName).To(BeEmpty())
	g.Expect(meta.FindStatusCondition(got.Status.Conditions, examplev1.ConditionReady).Message).
		To(ContainSubstring(ns + "/order"))
	expectEvent(g, ns, drink.Name, examplev1.ReasonResourceConflict)

	// Untouched, also by a reconcile after the conflict was reported (an
	// ignored change of the Drink): same resourceVersion, no owner, no label.
	mark := suite.Reconciles.Mark()
	g.Expect(testutil.Nudge(ctx, k8sClient, drink)).To(Succeed())
	suite.ExpectReconciled(g, mark, drinkController, key)
	g.Consistently(func(g Gomega) {
		var live corev1.ConfigMap
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(foreign), &live)).To(Succeed())
		g.Expect(live.ResourceVersion).To(Equal(foreign.ResourceVersion))
		g.Expect(live.OwnerReferences).To(BeEmpty())
		g.Expect(live.Data).To(Equal(foreign.Data))
	}).Should(Succeed())
	// One warning for the transition, not one per reconcile: one Event, no
	// series (a repeat on an unchanged Drink would be one).
	expectEmitted(g, ns, drink.Name, map[string]int32{examplev1.ReasonResourceConflict: 1})

	// Once the foreign ConfigMap is gone the Drink recovers.
	g.Expect(k8sClient.Delete(ctx, foreign)).To(Succeed())
	expectConfigMap(g, drink, "night", "milk")
	got = expectReady(g, key, metav1.ConditionTrue, examplev1.ReasonSynced)
	g.Expect(got.Status.ConfigMapName).To(Equal(testDrink))
}

// TestDrinkConflictWithUncachedConfigMap runs the controller with a
// ConfigMap cache filtered on the managed-by label, so a foreign ConfigMap is
// never in the cache: the uncached read must still find it and the Drink
// must not overwrite it.
func TestDrinkConflictWithUncachedConfigMap(t *testing.T) {
	g := newG(t)
	ctx := context.Background()
	stopManager()
	g.Expect(startManager(func(o *ctrl.Options) {
		o.Cache.ByObject = map[client.Object]cache.ByObject{&corev1.ConfigMap{}: {
			Label: labels.SelectorFromSet(labels.Set{apply.ManagedByLabel: apply.ManagedByValue}),
		}}
	})).To(Succeed())
	t.Cleanup(func() {
		stopManager()
		if err := startManager(); err != nil {
			t.Fatalf("restarting the default manager: %v", err)
		}
	})

	ns := testutil.Namespace(t, k8sClient)
	foreign := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hidden"},
		Data:       map[string]string{"owner": "someone else"},
	}
	g.Expect(k8sClient.Create(ctx, foreign)).To(Succeed())
	drink := newDrink(ns, "hidden", "unseen", "tea")
	g.Expect(k8sClient.Create(ctx, drink)).To(Succeed())
	expectReady(g, client.ObjectKeyFromObject(drink), metav1.ConditionFalse, examplev1.ReasonResourceConflict)

	var live corev1.ConfigMap
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(foreign), &live)).To(Succeed())
	g.Expect(live.ResourceVersion).To(Equal(foreign.ResourceVersion))
	g.Expect(live.OwnerReferences).To(BeEmpty())

	// A Drink without a foreign ConfigMap still gets its own, which the
	// filtered cache does see.
	fine := newDrink(ns, "visible", "seen", "coffee")
	g.Expect(k8sClient.Create(ctx, fine)).To(Succeed())
	expectReady(g, client.ObjectKeyFromObject(fine), metav1.ConditionTrue, examplev1.ReasonSynced)
	expectConfigMap(g, fine, "seen", "coffee")
}

func TestDrinkValidation(t *testing.T) {
	ns := testutil.Namespace(t, k8sClient)
	tests := []struct {
		name  string
		drink *examplev1.Drink
	}{
		{name: "empty name", drink: newDrink(ns, "invalid", "", "coffee")},
		{name: "empty drink", drink: newDrink(ns, "invalid", "mine", "")},
		{name: "name too long", drink: newDrink(ns, "invalid", strings.Repeat("n", 254), "coffee")},
		{name: "drink too long", drink: newDrink(ns, "invalid", "mine", strings.Repeat("d", 254))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newG(t)
			err := k8sClient.Create(context.Background(), tt.drink)
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
		})
	}
}

// TestDrinkCRDNames checks the two bugs of the seed's hand-written CRD are
// gone: the CRD is named after the plural, and drink is a plain string.
func TestDrinkCRDNames(t *testing.T) {
	g := newG(t)
	crd := &unstructured.Unstructured{}
	crd.SetAPIVersion("apiextensions.k8s.io/v1")
	crd.SetKind("CustomResourceDefinition")
	g.Expect(k8sClient.Get(context.Background(), client.ObjectKey{Name: "drinks.example.com"}, crd)).To(Succeed())
	for field, want := range map[string]string{"plural": "drinks", "singular": "drink", "kind": drinkKind} {
		got, _, err := unstructured.NestedString(crd.Object, "spec", "names", field)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(Equal(want), field)
	}
	scope, _, _ := unstructured.NestedString(crd.Object, "spec", "scope")
	g.Expect(scope).To(Equal("Namespaced"))
	shortNames, _, _ := unstructured.NestedStringSlice(crd.Object, "spec", "names", "shortNames")
	g.Expect(shortNames).To(Equal([]string{"sundrink"}))
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	// v1 (the storage version the controller works on), v1beta1, v1alpha1.
	g.Expect(versions).To(HaveLen(3))
	var v1 map[string]any
	for _, v := range versions {
		if v.(map[string]any)["name"] == "v1" {
			v1 = v.(map[string]any)
		}
	}
	g.Expect(v1).To(HaveKeyWithValue("storage", true))
	drinkSchema, _, _ := unstructured.NestedMap(v1,
		"schema", "openAPIV3Schema", "properties", "spec", "properties", "drink")
	g.Expect(drinkSchema).To(HaveKeyWithValue("type", "string"))
	g.Expect(drinkSchema).NotTo(HaveKey("format"))
}

// drinkController is the controller's name in logs and metrics.
const drinkController = ControllerName

// drinkZeroWritesAtSteadyState checks the controller reconciles every
// Drink of this test again (in sync or in conflict; after a change it
// ignores) without an API write, and a restarted manager reconciles them
// without a write either. Only this test's namespace is counted. It runs
// inside TestDrinkConformance/Restart (testutil.ConformanceKind
// SteadyState), whose one manager restart it shares.
func drinkZeroWritesAtSteadyState(t *testing.T) testutil.SteadyState {
	g := newG(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	synced := newDrink(ns, "synced", "steady", "water")
	g.Expect(k8sClient.Create(ctx, synced)).To(Succeed())
	g.Expect(k8sClient.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "blocked"}})).
		To(Succeed())
	blocked := newDrink(ns, "blocked", "stuck", "juice")
	g.Expect(k8sClient.Create(ctx, blocked)).To(Succeed())
	expectReady(g, client.ObjectKeyFromObject(synced), metav1.ConditionTrue, examplev1.ReasonSynced)
	expectConfigMap(g, synced, "steady", "water")
	expectReady(g, client.ObjectKeyFromObject(blocked), metav1.ConditionFalse, examplev1.ReasonResourceConflict)
	// Events are sent asynchronously: wait for the last ones before counting.
	expectEvent(g, ns, blocked.Name, examplev1.ReasonResourceConflict)
	keys := testutil.Keys(synced, blocked)

	mine := writes.In(testutil.InNamespace(ns))
	g.Expect(mine.Total()).NotTo(BeZero(), "the counter sees the manager's writes in %s", ns)
	g.Eventually(mine.Drain).WithPolling(time.Second).Should(BeZero(), "the manager settles")
	mark := suite.Reconciles.Mark()
	g.Expect(testutil.Nudge(ctx, k8sClient, synced)).To(Succeed())
	g.Expect(testutil.Nudge(ctx, k8sClient, blocked)).To(Succeed())
	suite.ExpectQuiet(g, mine, mark, drinkController, keys...)

	// A fresh manager reconciles every Drink of every test once: still no
	// write for this test's (the Restart case checks it).
	return testutil.SteadyState{
		Scopes: []testutil.Scope{testutil.InNamespace(ns)},
		Keys:   keys,
		Then: func(t *testing.T) {
			g := newG(t)
			t.Logf("restarted manager: %d reconciles of any Drink, this test's %d included",
				suite.Reconciles.Total(drinkController), len(keys))

			// The fresh manager is alive: it restores an edited ConfigMap.
			var cm corev1.ConfigMap
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(synced), &cm)).To(Succeed())
			cm.Data[configMapKeyDrink] = "soda"
			g.Expect(k8sClient.Update(ctx, &cm)).To(Succeed())
			expectConfigMap(g, synced, "steady", "water")
		},
	}
}

// A data key another field manager adds to the Drink's ConfigMap (here
// with kubectl patch) is removed: the ConfigMap's data is the Drink's. Its
// other tools' labels stay.
func TestDrinkRemovesDataKeysOthersAdded(t *testing.T) {
	g := newG(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	drink := newDrink(ns, testDrink, "afternoon", "tea")
	g.Expect(k8sClient.Create(ctx, drink)).To(Succeed())
	cm := expectConfigMap(g, drink, "afternoon", "tea")

	patch := []byte(`{"metadata":{"labels":{"team":"blue"}},"data":{"extra":"sugar"}}`)
	g.Expect(k8sClient.Patch(ctx, cm, client.RawPatch(types.MergePatchType, patch), client.FieldOwner("kubectl-patch"))).To(Succeed())
	g.Eventually(func(g Gomega) {
		got := &corev1.ConfigMap{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(cm), got)).To(Succeed())
		g.Expect(got.Data).To(Equal(map[string]string{configMapKeyName: "afternoon", configMapKeyDrink: "tea"}))
		g.Expect(got.Labels).To(HaveKeyWithValue("team", "blue"))
	}).Should(Succeed())
}
