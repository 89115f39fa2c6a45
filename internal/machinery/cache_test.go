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

package machinery_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	examplev1 "sunstrider.cn/operator/api/example/v1"
	webappv1 "sunstrider.cn/operator/api/webapp/v1"
	"sunstrider.cn/operator/internal/apply"
	"sunstrider.cn/operator/internal/machinery"
	"sunstrider.cn/operator/internal/testutil"
)

const (
	// foreignConfigMaps of foreignConfigMapSize bytes each: 20 MiB in all,
	// enough to stand well above the heap's noise, small enough to create
	// in a few seconds.
	foreignConfigMaps    = 40
	foreignConfigMapSize = 512 << 10
)

// Anyone may label their objects as the operator's (apply.ManagedByLabel):
// the operator's cache must not then hold them whole. Labelled ConfigMaps
// and Deployments that no operator kind controls are cached as their
// metadata, and the heap grows by a small part of their data's size, where
// the label-selected cache without the transforms grows by more than all
// of it (which shows the measure sees such growth). Objects controlled by
// an operator kind that makes them are cached whole.
func TestCacheHoldsLabelledForeignObjectsAsMetadata(t *testing.T) {
	g := testutil.NewG(t)
	env, err := testutil.NewEnvironment()
	g.Expect(err).NotTo(HaveOccurred())
	cfg, err := testutil.Start(env)
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	})
	c, err := client.New(cfg, client.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	ctx := t.Context()
	ns := testutil.Namespace(t, c)
	mark := map[string]string{apply.ManagedByLabel: apply.ManagedByValue}

	value := strings.Repeat("x", foreignConfigMapSize)
	for i := range foreignConfigMaps {
		g.Expect(c.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("foreign-%02d", i), Labels: mark},
			Data:       map[string]string{"data": value},
		})).To(Succeed())
	}
	// The operator's children: controlled by an operator kind. No garbage
	// collector runs here, so an owner that does not exist is kept.
	drink := &examplev1.Drink{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "own", UID: "drink-uid"}}
	ownCM := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: "own", Labels: mark,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(drink, examplev1.GroupVersion.WithKind("Drink"))},
		},
		Data: map[string]string{"settings": "kept"},
	}
	g.Expect(c.Create(ctx, ownCM)).To(Succeed())
	foreignDeploy := deployment(ns, "foreign", mark, nil)
	g.Expect(c.Create(ctx, foreignDeploy)).To(Succeed())
	app := &sunappsv1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "own", UID: "app-uid"}}
	ownDeploy := deployment(ns, "own", mark,
		[]metav1.OwnerReference{*metav1.NewControllerRef(app, sunappsv1.GroupVersion.WithKind("Application"))})
	g.Expect(c.Create(ctx, ownDeploy)).To(Succeed())

	dataSize := uint64(foreignConfigMaps * foreignConfigMapSize)
	empty := testutil.Namespace(t, c)
	opts := func(ns string) cache.Options {
		o := machinery.CacheOptions(webappv1.LabelGuestbook)
		o.DefaultNamespaces = map[string]cache.Config{ns: {}}
		return o
	}
	// What the objects add to the heap: the growth of a cache of ns less
	// that of the same cache of an empty namespace (its informers, client,
	// buffers), as a standby or a restarted leader starts.
	overhead, _ := cacheGrowth(ctx, t, cfg, opts(empty), empty)
	growth, ca := cacheGrowth(ctx, t, cfg, opts(ns), ns)
	t.Logf("heap growth with the operator's cache: %d KiB, %d KiB of it for an empty namespace, for %d KiB of labelled foreign ConfigMaps",
		growth>>10, overhead>>10, dataSize>>10)
	// Not nothing: a watch's decoder keeps a buffer as large as the
	// largest event it decoded (2 MiB here, whatever the number of
	// objects), and each stripped ConfigMap weighs about a KiB.
	g.Expect(growth).To(BeNumerically("<", overhead+dataSize/4), "the heap holds none of the foreign data")

	// Seen: the cache lists every foreign ConfigMap, without its data.
	list := &corev1.ConfigMapList{}
	g.Expect(ca.List(ctx, list, client.InNamespace(ns), client.MatchingLabels(mark))).To(Succeed())
	g.Expect(list.Items).To(HaveLen(foreignConfigMaps + 1))
	for _, cm := range list.Items {
		if cm.Name == ownCM.Name {
			continue
		}
		g.Expect(cm.UID).NotTo(BeEmpty())
		g.Expect(cm.Labels).To(Equal(mark))
		g.Expect(cm.Data).To(BeNil(), "ConfigMap %s", cm.Name)
		g.Expect(cm.Annotations).To(Equal(map[string]string{
			machinery.CachedDataChecksumAnnotation: machinery.DataChecksum(map[string]string{"data": value}, nil),
		}), "only the checksum the Guestbook reads")
	}

	cached := &corev1.ConfigMap{}
	g.Expect(ca.Get(ctx, client.ObjectKeyFromObject(ownCM), cached)).To(Succeed())
	g.Expect(cached.Data).To(Equal(ownCM.Data), "the operator's own ConfigMap is whole")

	d := &appsv1.Deployment{}
	g.Expect(ca.Get(ctx, client.ObjectKeyFromObject(foreignDeploy), d)).To(Succeed())
	g.Expect(d.UID).To(Equal(foreignDeploy.UID))
	g.Expect(d.Labels).To(Equal(mark))
	g.Expect(d.Generation).To(Equal(foreignDeploy.Generation))
	g.Expect(d.Annotations).To(BeNil())
	g.Expect(d.Spec).To(Equal(appsv1.DeploymentSpec{}), "a labelled foreign Deployment is cached without its spec")
	g.Expect(ca.Get(ctx, client.ObjectKeyFromObject(ownDeploy), d)).To(Succeed())
	g.Expect(d.Annotations).To(Equal(ownDeploy.Annotations))
	g.Expect(d.Spec).To(Equal(ownDeploy.Spec), "the operator's own Deployment is whole")

	// The control: the label selector alone (the cache before the
	// transforms) holds the labelled ConfigMaps whole.
	managed := labels.SelectorFromSet(mark)
	whole, _ := cacheGrowth(ctx, t, cfg, cache.Options{
		DefaultNamespaces: map[string]cache.Config{ns: {}},
		ByObject:          map[client.Object]cache.ByObject{&corev1.ConfigMap{}: {Label: managed}},
	}, ns)
	t.Logf("heap growth with a label-selected cache: %d KiB", whole>>10)
	g.Expect(whole).To(BeNumerically(">", overhead+dataSize), "the measure sees a cache that holds the data")
}

// deployment is a Deployment of one container, with an annotation of
// 128 KiB: what a foreign one may weigh beside its spec.
func deployment(ns, name string, marks map[string]string, owners []metav1.OwnerReference) *appsv1.Deployment {
	selector := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name, Labels: marks, OwnerReferences: owners,
			Annotations: map[string]string{"note": strings.Repeat("n", 128<<10)},
		},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: selector},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: selector},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}},
			},
		},
	}
}

// cacheGrowth starts a cache with opts, waits until it holds the
// ConfigMaps and Deployments of ns, and returns by how much the live heap
// grew meanwhile, and the cache (running until the test ends).
func cacheGrowth(ctx context.Context, t *testing.T, cfg *rest.Config, opts cache.Options, ns string) (uint64, cache.Cache) {
	t.Helper()
	ca, err := cache.New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	before := liveHeap()
	cctx, stop := context.WithCancel(ctx)
	t.Cleanup(stop)
	go func() { _ = ca.Start(cctx) }()
	if !ca.WaitForCacheSync(ctx) {
		t.Fatal("the cache did not start")
	}
	// List starts the kind's informer and waits for its sync: the cache
	// has then received every object. The copies List makes are dropped.
	for _, list := range []client.ObjectList{&corev1.ConfigMapList{}, &appsv1.DeploymentList{}} {
		if err := ca.List(ctx, list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
	}
	after := liveHeap()
	if after < before {
		return 0, ca
	}
	return after - before, ca
}

// liveHeap is the bytes of the heap's live objects, after collecting the
// rest (twice: sync.Pools keep their objects through one collection).
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
