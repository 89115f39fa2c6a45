package main

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	webappv1 "sunstrider.cn/operator/api/webapp/v1"
	"sunstrider.cn/operator/internal/machinery"
)

// weight is what one replica's cache of shard 0 of k weighs.
type weight struct {
	shards   int
	objects  map[string]int // by kind
	heap     int64          // live heap bytes over the baseline
	syncTime time.Duration
	// listed is what the sharded LISTs found in the same shard, by kind.
	listed map[string]int
	// watchLists is how many WATCH-list streams the server served the three
	// kinds while the cache synced.
	watchLists int
}

func (w weight) total() int {
	n := 0
	for _, v := range w.objects {
		n += v
	}
	return n
}

// liveHeap collects garbage and returns the bytes of live heap objects.
func liveHeap() int64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// shardedListWatch is lw with shardSelector added to every LIST and WATCH:
// how a controller-runtime cache (through cache.Options.NewInformer) can
// ask for one shard, as controller-runtime has no option of its own for it.
func shardedListWatch(lw toolscache.ListerWatcher, shardSelector string) toolscache.ListerWatcher {
	if shardSelector == "" {
		return lw
	}
	inner := toolscache.ToListerWatcherWithContext(lw)
	return &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (k8sruntime.Object, error) {
			o.ShardSelector = shardSelector
			return inner.ListWithContext(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.ShardSelector = shardSelector
			return inner.WatchWithContext(ctx, o)
		},
	}
}

// weigh starts, in this process, the operator's own cache configuration
// (machinery.CacheOptions: managedFields dropped, Deployments and
// Services selected by the managed-by label) for the Applications,
// Deployments and Services of shard 0 of k (everything when k is 1),
// waits for it to sync and returns the live heap it added. The cache is
// stopped before weigh returns.
func weigh(ctx context.Context, cfg *rest.Config, httpClient *http.Client, mapper apimeta.RESTMapper,
	scheme *k8sruntime.Scheme, k int) (weight, error) {
	sel := ""
	if k > 1 {
		sel = selector(shardKey, shardRanges(k)[0])
	}
	var mu sync.Mutex
	informers := map[string]toolscache.SharedIndexInformer{}
	opts := machinery.CacheOptions(webappv1.LabelGuestbook)
	opts.Scheme, opts.Mapper, opts.HTTPClient = scheme, mapper, httpClient
	opts.NewInformer = func(lw toolscache.ListerWatcher, obj k8sruntime.Object, resync time.Duration,
		idx toolscache.Indexers) toolscache.SharedIndexInformer {
		inf := toolscache.NewSharedIndexInformer(shardedListWatch(lw, sel), obj, resync, idx)
		mu.Lock()
		informers[fmt.Sprintf("%T", obj)] = inf
		mu.Unlock()
		return inf
	}

	baseline := liveHeap()
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	c, err := cache.New(cfg, opts)
	if err != nil {
		return weight{}, err
	}
	objs := map[string]client.Object{
		kindApplication: &sunappsv1.Application{}, kindDeployment: &appsv1.Deployment{}, kindService: &corev1.Service{}}
	for _, obj := range objs {
		if _, err := c.GetInformer(cctx, obj); err != nil {
			return weight{}, err
		}
	}
	start := time.Now()
	stopped := make(chan error, 1)
	go func() { stopped <- c.Start(cctx) }()
	// Each informer's sync, without the 100 ms polling of WaitForCacheSync.
	mu.Lock()
	started := slices.Collect(maps.Values(informers))
	mu.Unlock()
	for _, inf := range started {
		select {
		case <-inf.HasSyncedChecker().Done():
		case <-cctx.Done():
		}
	}
	w := weight{shards: k, syncTime: time.Since(start)}
	if !c.WaitForCacheSync(cctx) {
		stop()
		return weight{}, fmt.Errorf("the cache of shard 0 of %d did not sync: %v", k, <-stopped)
	}
	w.heap = liveHeap() - baseline
	w.objects = map[string]int{}
	mu.Lock()
	for name, obj := range objs {
		w.objects[name] = len(informers[fmt.Sprintf("%T", obj)].GetStore().ListKeys())
	}
	mu.Unlock()
	stop()
	if err := <-stopped; err != nil {
		return weight{}, err
	}
	return w, nil
}
