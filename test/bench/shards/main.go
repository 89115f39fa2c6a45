// Command shards checks and measures Kubernetes' server-side sharded list
// and watch (KEP-5866, alpha in v1.36: feature gate ShardedListAndWatch,
// ListOptions.ShardSelector) for the operator's kinds, sharded by
// namespace: an Application and its children share a namespace, so they
// share a shard.
//
//	go -C test build -o "$PWD/bin/test-bench-shards" ./bench/shards
//	bin/test-bench-shards -kubeconfig bin/shards/kubeconfig -n 10000 -namespaces 100
//
// It installs the Application CRD, makes n Applications spread over the
// namespaces, each with a Deployment (0 replicas: no Pod) and a ClusterIP
// Service owned by it (kept between runs), then checks on the API server
// that sharded LISTs and WATCHes return exactly their shard, and weighs
// what the operator's cache of shard 0 of 1, 2 and 4 costs this process.
// The cluster needs more than kwokctl's default /24 of Service IPs for
// n > 250 (test/bench/kwok.yaml has a /16). The Markdown report goes to
// stdout, progress to stderr; the exit code is 1 when a check fails or
// the API server ignores shard selectors.
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
)

type config struct {
	kubeconfig string
	kubectl    string
	n          int
	namespaces int
	workers    int
	shards     []int
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05 ")+format+"\n", args...)
}

func main() {
	cfg := config{shards: []int{1, 2, 4}}
	kubectl := "kubectl"
	if bin := os.Getenv("K8S_BIN"); bin != "" {
		kubectl = filepath.Join(bin, "kubectl")
	}
	// controller-runtime's config package, linked in through the
	// operator's packages, registers -kubeconfig already.
	if flag.Lookup("kubeconfig") == nil {
		flag.String("kubeconfig", "", "Paths to a kubeconfig.")
	}
	flag.StringVar(&cfg.kubectl, "kubectl", kubectl, "kubectl binary (default $K8S_BIN/kubectl when K8S_BIN is set).")
	flag.IntVar(&cfg.n, "n", 10000, "Applications to make (each with a Deployment and a Service).")
	flag.IntVar(&cfg.namespaces, "namespaces", 100, "Namespaces to spread them over.")
	flag.IntVar(&cfg.workers, "workers", 8, "Objects created in parallel.")
	flag.Parse()
	if cfg.kubeconfig = flag.Lookup("kubeconfig").Value.String(); cfg.kubeconfig == "" {
		cfg.kubeconfig = os.Getenv("KUBECONFIG")
	}
	if cfg.kubeconfig == "" {
		fmt.Fprintln(os.Stderr, "shards: -kubeconfig or $KUBECONFIG is required "+
			"(a cluster whose API server runs with --feature-gates=ShardedListAndWatch=true)")
		os.Exit(2)
	}
	// Every namespace holds an Application: the checks select namespaces
	// and expect to find some.
	if cfg.namespaces < 2 || cfg.n < cfg.namespaces || cfg.workers < 1 {
		fmt.Fprintln(os.Stderr, "shards: -namespaces must be at least 2, -n at least -namespaces, -workers at least 1")
		os.Exit(2)
	}
	// The cache's own logs (watch errors, for one) go to stderr.
	ctrllog.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	code, err := run(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "shards:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(ctx context.Context, cfg config) (int, error) {
	restCfg, err := clientcmd.BuildConfigFromFlags("", cfg.kubeconfig)
	if err != nil {
		return 0, err
	}
	// No client-side rate limit: the workers bound the load.
	restCfg.QPS = -1
	scheme := k8sruntime.NewScheme()
	for _, add := range []func(*k8sruntime.Scheme) error{
		clientgoscheme.AddToScheme, sunappsv1.AddToScheme, apiextensionsv1.AddToScheme, gatewayv1.Install} {
		if err := add(scheme); err != nil {
			return 0, err
		}
	}
	httpClient, err := rest.HTTPClientFor(restCfg)
	if err != nil {
		return 0, err
	}
	c, err := client.NewWithWatch(restCfg, client.Options{Scheme: scheme, HTTPClient: httpClient})
	if err != nil {
		return 0, err
	}
	cs, err := kubernetes.NewForConfigAndClient(restCfg, httpClient)
	if err != nil {
		return 0, err
	}
	version, err := cs.Discovery().ServerVersion()
	if err != nil {
		return 0, fmt.Errorf("reaching the API server: %w", err)
	}

	logf("Installing the Application CRD")
	if err := installCRD(ctx, c, cfg.kubectl, cfg.kubeconfig); err != nil {
		return 0, err
	}
	logf("Making %d Applications with their Deployment and Service in %d namespaces (%d workers)",
		cfg.n, cfg.namespaces, cfg.workers)
	if err := ensureObjects(ctx, c, cfg.n, cfg.namespaces, cfg.workers); err != nil {
		return 0, err
	}

	r := &report{}
	host, _ := os.Hostname()
	r.printf("# Server-side sharded list and watch (KEP-5866) for the operator's kinds\n\n")
	r.printf("- Date: %s; machine: %s, %d cores (runtime.NumCPU), %s/%s, %s\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), host, runtime.NumCPU(),
		runtime.GOOS, runtime.GOARCH, runtime.Version())
	if load, err := os.ReadFile("/proc/loadavg"); err == nil {
		r.printf("- Load average when the checks started (/proc/loadavg): %s\n",
			strings.Join(strings.Fields(string(load))[:3], " "))
	}
	r.printf("- API server: %s; %s\n", version.GitVersion, featureMetric(ctx, cs))
	r.printf("- Arguments: `%s`\n", strings.Join(os.Args[1:], " "))
	r.printf("- Objects: %d Applications in %d namespaces, each with a Deployment (0 replicas) and a Service "+
		"with a controller reference to it: %d objects\n\n", cfg.n, cfg.namespaces, 3*cfg.n)

	logf("Checking that the API server honours shard selectors")
	honoured, err := probeGate(ctx, c, r)
	if err != nil {
		return 0, err
	}
	if !honoured {
		fmt.Print(r.b.String())
		return 1, nil
	}
	printBalance(r, cfg.namespaces)
	logf("Checking what is hashed")
	if err := checkHashedField(ctx, c, r, cfg.namespaces); err != nil {
		return 0, err
	}
	logf("Checking sharded LISTs for 2 and 4 shards")
	listed, err := checkShardedLists(ctx, c, r, []int{2, 4})
	if err != nil {
		return 0, err
	}
	listed[1] = map[string]int{}
	for _, kd := range kinds {
		all, err := list(ctx, c, kd, "")
		if err != nil {
			return 0, err
		}
		listed[1][kd.name] = len(all.namespaceOf)
	}
	logf("Checking sharded WATCHes")
	if err := checkShardedWatch(ctx, c, r, cfg.namespaces); err != nil {
		return 0, err
	}

	// The mapper is made and filled before the first baseline, so that its
	// discovery data is not counted in a cache's weight.
	mapper, err := apiutil.NewDynamicRESTMapper(restCfg, httpClient)
	if err != nil {
		return 0, err
	}
	for _, obj := range []client.Object{&sunappsv1.Application{}, &corev1.Service{}, &appsv1.Deployment{}} {
		gvk, err := apiutil.GVKForObject(obj, scheme)
		if err != nil {
			return 0, err
		}
		if _, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			return 0, err
		}
	}
	var weights []weight
	for _, k := range cfg.shards {
		logf("Weighing the cache of shard 0 of %d", k)
		streams, err := watchListStreams(ctx, cs)
		if err != nil {
			return 0, err
		}
		w, err := weigh(ctx, restCfg, httpClient, mapper, scheme, k)
		if err != nil {
			return 0, err
		}
		after, err := watchListStreams(ctx, cs)
		if err != nil {
			return 0, err
		}
		w.watchLists = after - streams
		w.listed = listed[k]
		logf("  %d objects, %.1f MiB, synced in %s", w.total(), mib(w.heap), w.syncTime.Round(time.Millisecond))
		weights = append(weights, w)
	}
	printWeights(r, weights)
	checkWeights(r, weights)

	if len(r.failures) == 0 {
		r.printf("## Result\n\nAll checks passed.\n")
	} else {
		r.printf("## Result\n\n%d checks failed:\n\n", len(r.failures))
		for _, f := range r.failures {
			r.printf("- %s\n", f)
		}
	}
	fmt.Print(r.b.String())
	if len(r.failures) > 0 {
		return 1, nil
	}
	return 0, nil
}

// printBalance shows how namespaces of several naming styles spread over
// 2 and 4 shards, by the hash checked against the server below.
func printBalance(r *report, n int) {
	names := func(format string, idx func(int) any) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf(format, idx(i))
		}
		return out
	}
	id := func(i int) any { return i }
	styles := []struct {
		what  string
		names []string
	}{
		{"this run's: shards- and 5 generateName characters", names("%s", func(i int) any { return namespaceName(i) })},
		{"shards-000, shards-001, ...", names("shards-%03d", id)},
		{"tenant-0, tenant-1, ...", names("tenant-%d", id)},
		{"000-shards, 001-shards, ...", names("%03d-shards", id)},
	}
	r.printf("## Shard balance by namespace name\n\n")
	r.printf("Namespaces per shard for %d namespaces named in several styles (FNV-1a 64 of the name, range split "+
		"into equal parts).\n\n", n)
	r.printf("| names | 2 shards | 4 shards |\n|---|---|---|\n")
	for _, st := range styles {
		r.printf("| %s | %s | %s |\n", st.what, joinInts(balance(st.names, 2)), joinInts(balance(st.names, 4)))
	}
	r.printf("\n")
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, " / ")
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func printWeights(r *report, ws []weight) {
	r.printf("## One replica's cache of shard 0\n\n")
	r.printf("In this process: the operator's cache configuration (machinery.CacheOptions: managedFields " +
		"dropped, Deployments and Services selected by the managed-by label) for Applications, Deployments and " +
		"Services, with the shard selector of shard 0 added to its LISTs and WATCHes through " +
		"cache.Options.NewInformer (1 shard: no selector). Heap: live heap (runtime/metrics /gc/heap/live:bytes " +
		"after runtime.GC) once synced, minus the same before the cache started. Sync time: from starting " +
		"the cache until each of its 3 informers had synced.\n\n")
	r.printf("| shards | objects cached (Applications + Deployments + Services) | heap MiB " +
		"| heap per Application KiB | sync time |\n")
	r.printf("|---|---|---|---|---|\n")
	for _, w := range ws {
		perApp := "n/a"
		if a := w.objects[kindApplication]; a > 0 {
			perApp = fmt.Sprintf("%.2f", float64(w.heap)/1024/float64(a))
		}
		r.printf("| %d | %d (%d + %d + %d) | %.1f | %s | %s |\n", w.shards, w.total(),
			w.objects[kindApplication], w.objects[kindDeployment], w.objects[kindService],
			mib(w.heap), perApp, w.syncTime.Round(time.Millisecond))
	}
	r.printf("\n")
}

// checkWeights checks that each cache held exactly as many objects of each
// kind as the sharded LISTs found in its shard, and says how it synced.
func checkWeights(r *report, ws []weight) {
	r.printf("| shards | cached = the LISTs' count of shard 0, per kind " +
		"| initial sync: WATCH streams with sendInitialEvents (apiserver_watch_list_duration_seconds_count) | check |\n")
	r.printf("|---|---|---|---|\n")
	for _, w := range ws {
		same := true
		for _, kd := range kinds {
			same = same && w.objects[kd.name] == w.listed[kd.name]
		}
		r.printf("| %d | %s | %d | %s |\n", w.shards, yes(same), w.watchLists,
			r.check(same, fmt.Sprintf("the cache of shard 0 of %d does not hold what the LISTs of that shard returned",
				w.shards)))
	}
	r.printf("\n")
}

// watchListStreams is how many WATCH-list streams (a WATCH with
// sendInitialEvents, what client-go's informers sync by when its
// WatchListClient feature is on) the API server has served for the
// three kinds, from its own metrics.
func watchListStreams(ctx context.Context, cs kubernetes.Interface) (int, error) {
	raw, err := cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return 0, fmt.Errorf("reading the API server's metrics: %w", err)
	}
	total := 0
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "apiserver_watch_list_duration_seconds_count{") {
			continue
		}
		for _, res := range []string{"applications", "deployments", "services"} {
			if strings.Contains(line, `resource="`+res+`"`) {
				var n float64
				if _, err := fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &n); err != nil {
					return 0, fmt.Errorf("reading %q: %w", line, err)
				}
				total += int(n)
			}
		}
	}
	return total, sc.Err()
}

// featureMetric is the API server's own kubernetes_feature_enabled line
// for ShardedListAndWatch, or why it could not be read.
func featureMetric(ctx context.Context, cs kubernetes.Interface) string {
	raw, err := cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return "its /metrics could not be read: " + err.Error()
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 1<<20), 1<<20)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "kubernetes_feature_enabled{") &&
			strings.Contains(line, `name="ShardedListAndWatch"`) {
			return "its /metrics: `" + line + "`"
		}
	}
	return "its /metrics has no kubernetes_feature_enabled line for ShardedListAndWatch"
}
