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
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "sunstrider.cn/operator/api/example/v1"
	"sunstrider.cn/operator/internal/apply"
	controllers "sunstrider.cn/operator/internal/controller"
	"sunstrider.cn/operator/internal/machinery"
	"sunstrider.cn/operator/internal/testutil"
)

// cachedConfigMap waits until the running manager's cache (what the
// controllers read) holds the ConfigMap at key as the API server does (the
// same resourceVersion), and returns the cached copy and the live one.
func cachedConfigMap(g *WithT, key client.ObjectKey) (cached, live *corev1.ConfigMap) {
	cached, live = &corev1.ConfigMap{}, &corev1.ConfigMap{}
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(context.Background(), key, live)).To(Succeed())
		g.Expect(suite.Cache.Get(context.Background(), key, cached)).To(Succeed())
		g.Expect(cached.ResourceVersion).To(Equal(live.ResourceVersion))
	}).Should(Succeed())
	return cached, live
}

// The cache holds a foreign ConfigMap as its metadata: enough for the Drink
// of its name to see the conflict, none of its data or annotations (a
// kubectl-applied ConfigMap holds a second copy of its data in one). The
// Drink's own ConfigMap is cached whole, and an edit of it is restored.
func TestDrinkCachesForeignConfigMapsAsMetadata(t *testing.T) {
	g := newG(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	foreign := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   ns,
			Name:        testDrink,
			Labels:      map[string]string{"team": "blue"},
			Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": `{"data":{"secret":"recipe"}}`},
		},
		Data:       map[string]string{"secret": "recipe"},
		BinaryData: map[string][]byte{"blob": []byte("binary recipe")},
	}
	g.Expect(k8sClient.Create(ctx, foreign)).To(Succeed())
	drink := newDrink(ns, testDrink, "night", "milk")
	g.Expect(k8sClient.Create(ctx, drink)).To(Succeed())
	expectReady(g, client.ObjectKeyFromObject(drink), metav1.ConditionFalse, examplev1.ReasonResourceConflict)

	cached, _ := cachedConfigMap(g, client.ObjectKeyFromObject(foreign))
	g.Expect(cached.UID).To(Equal(foreign.UID))
	g.Expect(cached.Labels).To(Equal(foreign.Labels))
	g.Expect(cached.Data).To(BeNil())
	g.Expect(cached.BinaryData).To(BeNil())
	g.Expect(cached.Annotations).To(Equal(map[string]string{
		machinery.CachedDataChecksumAnnotation: machinery.DataChecksum(foreign.Data, foreign.BinaryData),
	}), "only the dropped data's checksum, not last-applied-configuration's copy of it")

	// The Drink's own ConfigMap, once the foreign one is gone: cached whole.
	g.Expect(k8sClient.Delete(ctx, foreign)).To(Succeed())
	own := expectConfigMap(g, drink, "night", "milk")
	cached, live := cachedConfigMap(g, client.ObjectKeyFromObject(own))
	g.Expect(cached.Data).To(Equal(live.Data))
	g.Expect(cached.Annotations).To(HaveKeyWithValue(apply.HashAnnotation, live.Annotations[apply.HashAnnotation]))

	// Drift on it is seen and restored.
	own.Data[configMapKeyDrink] = "water"
	g.Expect(k8sClient.Update(ctx, own, client.FieldOwner("kubectl-edit"))).To(Succeed())
	restored := expectConfigMap(g, drink, "night", "milk")
	g.Expect(restored.UID).To(Equal(own.UID))
	cached, live = cachedConfigMap(g, client.ObjectKeyFromObject(own))
	g.Expect(cached.Data).To(Equal(live.Data))
	g.Expect(live.Data).To(Equal(restored.Data))
}

// A ConfigMap the Drink controls but without the operator's label (made by
// an operator of the seed's design, or its label removed by hand) is cached
// whole (its controller reference, not the label, makes it the Drink's:
// machinery.ConfigMapTransform): the Drink applies the label (and its hash),
// after which the ConfigMap is in sync, and the manager writes nothing
// more.
func TestDrinkLabelsItsUnlabelledConfigMapAndSettles(t *testing.T) {
	g := newG(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	stopManager()
	t.Cleanup(func() {
		stopManager()
		if err := startManager(); err != nil {
			t.Fatalf("restarting the default manager: %v", err)
		}
	})

	// What an older operator left: the Drink, and its ConfigMap with a
	// controller reference, the spec as data, no label and no hash.
	drink := newDrink(ns, testDrink, "dawn", "coffee")
	g.Expect(k8sClient.Create(ctx, drink)).To(Succeed())
	old := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       ns,
			Name:            drink.Name,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(drink, examplev1.GroupVersion.WithKind(drinkKind))},
		},
		Data: map[string]string{configMapKeyName: "dawn", configMapKeyDrink: "coffee"},
	}
	g.Expect(k8sClient.Create(ctx, old, client.FieldOwner("manager"))).To(Succeed())

	g.Expect(startManager()).To(Succeed())
	own := expectConfigMap(g, drink, "dawn", "coffee")
	g.Expect(own.UID).To(Equal(old.UID))
	expectReady(g, client.ObjectKeyFromObject(drink), metav1.ConditionTrue, examplev1.ReasonSynced)
	cached, live := cachedConfigMap(g, client.ObjectKeyFromObject(own))
	g.Expect(cached.Data).To(Equal(live.Data))
	g.Expect(cached.Labels).To(HaveKeyWithValue(apply.ManagedByLabel, apply.ManagedByValue))

	// Settled: a reconcile after the label was applied writes nothing.
	mine := writes.In(testutil.InNamespace(ns))
	g.Expect(mine.Total()).NotTo(BeZero(), "the label was applied")
	expectEvent(g, ns, drink.Name, controllers.ReasonUpdated)
	g.Eventually(mine.Drain).WithPolling(time.Second).Should(BeZero(), "the manager settles")
	mark := suite.Reconciles.Mark()
	g.Expect(testutil.Nudge(ctx, k8sClient, drink)).To(Succeed())
	suite.ExpectQuiet(g, mine, mark, drinkController, client.ObjectKeyFromObject(drink))
}
