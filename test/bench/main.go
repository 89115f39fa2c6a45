// Command bench measures the operator's Application controller against a
// local cluster (hack/dev-cluster.sh: kwok, QPS limits off) and compares it
// with references run in the same invocation on the same cluster:
//
//   - floor: a plain client creating the same Deployments and Services
//     directly and waiting for them to be available;
//   - Application floor: a plain client making the writes the Application
//     API itself needs (the Application, its two children, one status
//     write), no controller: what any controller of this API costs at least;
//   - seed design: internal/testutil/seedcontroller, the seed's reconcile (100 ms
//     ticker, whole-status reflect.DeepEqual, create-only children), run as
//     a child process of this binary.
//
// For each N it creates N Applications, waits until every one is Ready and
// mirrors an available Deployment, and prints one Markdown table. It exits
// non-zero when an Application does not converge or when the operator
// writes anything at steady state (idle window, and after a restart).
//
// `make bench` runs it; docs/performance.md explains every figure. A smoke
// run, from the repository's root (test/ is a Go module of its own: built
// there, run from the root, whose config/ it reads):
//
//	go -C test build -o "$PWD/bin/test-bench" ./bench
//	bin/test-bench -n 20 -idle 5s -references=false -kubeconfig bin/e2e/kubeconfig -manager bin/manager
package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	dto "github.com/prometheus/client_model/go"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	configv1alpha1 "sunstrider.cn/operator/api/config/v1alpha1"
	"sunstrider.cn/operator/internal/testutil/seedcontroller"
)

const (
	operatorNamespace = "sunstrider-operator-system"
	// reportingController is the operator's event source.
	reportingController = "sunstrider-operator"
)

var scheme = kruntime.NewScheme()

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(sunappsv1.AddToScheme(scheme))
	utilruntime.Must(configv1alpha1.AddToScheme(scheme))
}

type config struct {
	ns          []int
	idle        time.Duration
	timeout     time.Duration
	kubeconfig  string
	manager     string
	managerArgs []string
	kubectl     string
	kustomize   string
	workDir     string
	references  bool
	seed        bool
	keep        bool
	restart     bool
	out         string
	ports       ports
	seedMode    bool
	cpuProfile  time.Duration
	// apiserverProfile is how long kube-apiserver is profiled from each
	// burst's first create (profile.go).
	apiserverProfile time.Duration
	floorLast        bool
	// floor is false to skip measuring the floor (-floor).
	floor bool
	// alternate swaps floorLast in every second run of a repeated N
	// (floorsFirst).
	alternate bool
	// operator is false when only the references run (-operator=false).
	operator bool
	// childAccess are the OperatorConfiguration spec.childAccess modes the
	// operator runs in, one measurement each (-child-access); none: once,
	// with the cluster's OperatorConfiguration left as it is.
	childAccess []configv1alpha1.ChildAccess
	// webhooksOff adds a run of the operator with its admission and
	// conversion webhooks off and their configurations removed
	// (-webhooks-off): their share of the operator's cost.
	webhooksOff bool
	appFloor    bool
	warmUp      bool
	// referencesMax is the largest N the references run at; 0: every N.
	referencesMax int
	// perNamespace is how many items each variant puts in one namespace
	// (spread); 0: all of them in one.
	perNamespace int
	// foreignConfigMaps ConfigMaps of foreignConfigMapKiB each, not the
	// operator's, are created before the variants run (foreign.go).
	foreignConfigMaps, foreignConfigMapKiB int
	// serviceAccount runs the manager as its ServiceAccount
	// (serviceAccountRBAC) and with its admission policies
	// (serviceAccountPolicies); "": with the cluster's admin kubeconfig.
	serviceAccount string
	// keepForeign keeps them after the run.
	keepForeign bool
	// rates, base and rateWindow are the steady-rate mode's (steady.go).
	rates      []float64
	base       int
	rateWindow time.Duration
	// steadyIdle is the steady-rate mode's idle window (idle.go), bisect
	// its rate search (bisect.go).
	steadyIdle time.Duration
	bisect     bisectSpec
	// quietWait bounds the wait for a quiet machine before each variant
	// (settle).
	quietWait time.Duration
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05 ")+format+"\n", args...)
}

func main() {
	cfg := parseFlags()
	if cfg.seedMode {
		if err := runSeedController(cfg); err != nil {
			fmt.Fprintln(os.Stderr, "seed controller:", err)
			os.Exit(1)
		}
		return
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	code, err := run(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func parseFlags() *config {
	c := &config{}
	k8sBin := os.Getenv("K8S_BIN")
	if k8sBin == "" {
		k8sBin = "bin/k8s/v1.37.2"
	}
	kubeconfig := os.Getenv("KUBECONFIG")
	if kubeconfig == "" {
		kubeconfig = "bin/bench/kubeconfig"
	}
	var ns, args string
	flag.StringVar(&ns, "n", "100,1000", "Comma-separated numbers of Applications, one measurement each.")
	flag.DurationVar(&c.idle, "idle", time.Minute,
		"Idle window after convergence, and after the restart, in which the operator must not write.")
	flag.DurationVar(&c.timeout, "timeout", 20*time.Minute, "How long one variant may take to converge.")
	flag.StringVar(&c.manager, "manager", "bin/manager", "The operator binary (make build).")
	flag.StringVar(&args, "manager-args", "",
		"Extra operator flags, space-separated (e.g. --max-concurrent-reconciles=4).")
	flag.StringVar(&c.kubectl, "kubectl", filepath.Join(k8sBin, "kubectl"),
		"kubectl, to install the CRDs and webhook configurations.")
	flag.StringVar(&c.kustomize, "kustomize", "bin/kustomize", "kustomize, to render config/dev.")
	flag.StringVar(&c.workDir, "work-dir", "", "Where logs and certificates go (default: a temporary directory).")
	flag.BoolVar(&c.references, "references", true, "Also run the floors and the seed design.")
	flag.BoolVar(&c.seed, "seed", true, "With -references, also run the seed design (the slowest part at large N).")
	flag.BoolVar(&c.keep, "keep", false, "Keep the operator's namespace after the run, for inspection.")
	flag.BoolVar(&c.restart, "restart", true, "Restart the operator after convergence and check it stays silent.")
	flag.StringVar(&c.out, "out", "", "Also write the Markdown table to this file.")
	flag.IntVar(&c.ports.metrics, "metrics-port", 28080, "Metrics port of the measured process (plain HTTP).")
	flag.IntVar(&c.ports.probe, "probe-port", 28081, "Health probe port of the measured process.")
	flag.IntVar(&c.ports.pprof, "pprof-port", 28082,
		"pprof port of the measured process (a forced GC before reading the heap).")
	flag.IntVar(&c.ports.webhook, "webhook-port", 29443,
		"Webhook port of the operator; the webhook configurations point at it.")
	flag.DurationVar(&c.cpuProfile, "cpu-profile", 0,
		"Record a CPU profile of the controller this long from its first create (<variant>-<N>-cpu.pprof in -work-dir; "+
			"0: none, profiling costs a little CPU).")
	flag.DurationVar(&c.apiserverProfile, "apiserver-profile", 30*time.Second,
		"Profile kube-apiserver's CPU this long from each burst's first create, print it by part for every variant "+
			"and the operator's profile against the Application floor's (0: none). Cover the burst (60s at N=1000 "+
			"here) to compare the parts per Application: a variant that converges sooner waits for its profile.")
	flag.BoolVar(&c.operator, "operator", true, "Run the operator. False: only the references (-references), "+
		"e.g. the floor at an N the operator was measured at before.")
	flag.BoolVar(&c.floorLast, "floor-last", false,
		"Run the floors after the operator instead of before (to see whether running second costs a variant time).")
	flag.BoolVar(&c.alternate, "alternate", true, "With -references, swap the order in every second run of a "+
		"repeated N (the floors after the operator in runs 2, 4, ...), so that the median of the operator's "+
		"ratios does not carry the cost of always running second or always first.")
	flag.BoolVar(&c.warmUp, "warm-up", true, "With -references, run the floor once unmeasured before the variants of "+
		"each N, so that none of them runs on a cluster fresher than the others'.")
	flag.BoolVar(&c.floor, "floor", true, "With -references, measure the floor (false: only the Application floor "+
		"and the operator are compared; the warm-up still runs the floor, unmeasured).")
	flag.BoolVar(&c.appFloor, "app-floor", true, "With -references, also run the Application floor: "+
		"the Application API's own writes by a plain client, no controller (in the steady-rate mode: at each rate, "+
		"after the operator).")
	var rates, childAccess, bisect string
	flag.BoolVar(&c.webhooksOff, "webhooks-off", false, "Also run the operator with its webhooks off "+
		"(--enable-webhooks=false, the webhook configurations removed, as for the Application floor), after the "+
		"operator: the variant \"operator (webhooks off)\", whose cost against the operator's is the admission "+
		"webhooks' share (in the steady-rate mode: its creates and spec changes at each rate, after the operator's).")
	flag.StringVar(&childAccess, "child-access", "", "Comma-separated OperatorConfiguration spec.childAccess modes "+
		"(Requester, Delegated): the operator runs once in each, in this order, the benchmark setting the mode in the "+
		"OperatorConfiguration \"default\" (created if absent) before it starts; empty: once, the cluster's "+
		"OperatorConfiguration left as it is (none: the operator's default, Requester). Applications are created by "+
		"the benchmark's admin, whom every check allows: Requester measures the checks' cost, not a refusal.")
	flag.IntVar(&c.referencesMax, "references-max", 0, "With -references, run the floors and the seed design only "+
		"at N up to this (0: at every N); the operator runs at every N.")
	flag.IntVar(&c.perNamespace, "per-namespace", 0, "Items per namespace: each variant spreads its N items over "+
		"namespaces of this many (0: all in one namespace, where kube-controller-manager's per-namespace lists grow with N).")
	flag.IntVar(&c.foreignConfigMaps, "foreign-configmaps", 0, "ConfigMaps that are not the operator's to create first "+
		"(in namespace "+foreignNamespace+"), to weigh their cost on the operator's memory (docs/performance.md).")
	flag.IntVar(&c.foreignConfigMapKiB, "foreign-configmap-kib", 100, "KiB of data in each of -foreign-configmaps.")
	flag.StringVar(&c.serviceAccount, "service-account", "", "Run the operator as its ServiceAccount with "+
		"config/default's RBAC: \"rbac\" without its ValidatingAdmissionPolicies (removed if present), "+
		"\"pod-policy\" with the Pod policy only, \"policies\" with both; empty: as the cluster's admin. "+
		"A pair of runs (hack/bench-ab.sh's AB_BEFORE_ARGS and "+
		"AB_AFTER_ARGS) weighs the policies.")
	flag.BoolVar(&c.keepForeign, "keep-foreign", false, "Keep the -foreign-configmaps after the run (for the next one).")
	flag.StringVar(&rates, "rates", "", "Steady-rate mode instead of the bursts: comma-separated creates per second, "+
		"one measurement each (see -base, -rate-window).")
	flag.IntVar(&c.base, "base", 5000, "Steady-rate mode: converged Applications the cluster holds first.")
	flag.DurationVar(&c.rateWindow, "rate-window", time.Minute, "Steady-rate mode: how long each rate creates.")
	flag.StringVar(&bisect, "bisect", "", "Steady-rate mode: lo,hi,steps: bisect the Application floor's rates "+
		"between lo and hi creates per second for the highest it sustains, then run the operator at it (bisect.go).")
	flag.DurationVar(&c.steadyIdle, "steady-idle", 5*time.Minute, "Steady-rate mode: the idle window on the "+
		"converged base, before the operator's restart (the steady cost table; 0: neither).")
	flag.DurationVar(&c.quietWait, "quiet-wait", 10*time.Minute, "How long to wait for a quiet machine before each "+
		"variant (a thousand Applications' children take the garbage collector and etcd minutes to forget); a variant "+
		"that starts busy gets no ratio. 0: do not wait (a smoke run).")
	flag.BoolVar(&c.seedMode, "seed-controller", false, "Internal: run the seed design's controller in this process.")
	flag.Parse()
	// controller-runtime registers --kubeconfig: an admin kubeconfig of the cluster.
	c.kubeconfig = kubeconfig
	if f := flag.Lookup("kubeconfig"); f != nil && f.Value.String() != "" {
		c.kubeconfig = f.Value.String()
	}
	for s := range strings.SplitSeq(ns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			fmt.Fprintf(os.Stderr, "-n: %q is not a positive number\n", s)
			os.Exit(2)
		}
		c.ns = append(c.ns, n)
	}
	for s := range strings.SplitSeq(rates, ",") {
		if strings.TrimSpace(s) == "" {
			continue
		}
		r, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || r <= 0 {
			fmt.Fprintf(os.Stderr, "-rates: %q is not a positive number\n", s)
			os.Exit(2)
		}
		c.rates = append(c.rates, r)
	}
	modes, err := parseChildAccess(childAccess)
	if err != nil {
		fmt.Fprintln(os.Stderr, "-child-access:", err)
		os.Exit(2)
	}
	c.childAccess = modes
	if c.bisect, err = parseBisect(bisect); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	c.managerArgs = strings.Fields(args)
	return c
}

// runSeedController is the child process of the seed-design variant.
func runSeedController(c *config) error {
	ctrl.SetLogger(zap.New(zap.UseDevMode(true)))
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: fmt.Sprintf(":%d", c.ports.metrics)},
		HealthProbeBindAddress: fmt.Sprintf(":%d", c.ports.probe),
		PprofBindAddress:       fmt.Sprintf(":%d", c.ports.pprof),
	})
	if err != nil {
		return err
	}
	seed := &seedcontroller.Reconciler{Client: mgr.GetClient(), Scheme: mgr.GetScheme()}
	if err := seed.SetupWithManager(mgr); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}

type bench struct {
	cfg *config
	c   client.WithWatch
	// apiserver reads kube-apiserver's /metrics.
	apiserver rest.Interface
	failed    []string
	// weights is the table of cached object sizes of the last operator run.
	weights string
	// stages are the stage summaries of every measured variant.
	stages []stageSummary
	// cost is the steady-rate mode's steady cost (idle.go), bisected its
	// rate search (bisect.go).
	cost     steadyCost
	bisected bisectResult
}

func run(ctx context.Context, cfg *config) (int, error) {
	restCfg, err := clientcmd.BuildConfigFromFlags("", cfg.kubeconfig)
	if err != nil {
		return 0, err
	}
	restCfg.QPS = -1 // no client-side rate limit: the cluster has none either
	c, err := client.NewWithWatch(restCfg, client.Options{Scheme: scheme})
	if err != nil {
		return 0, err
	}
	if err := ensureWorkDir(cfg); err != nil {
		return 0, err
	}
	if cfg.kubeconfig, err = filepath.Abs(cfg.kubeconfig); err != nil {
		return 0, err
	}
	if _, err := os.Stat(cfg.manager); err != nil {
		return 0, fmt.Errorf("the operator binary: %w (run `make build`)", err)
	}
	if len(cfg.rates) == 0 {
		logf("bench: N=%v, idle %s, logs in %s", cfg.ns, cfg.idle, cfg.workDir)
	}
	cs, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return 0, err
	}
	b := &bench{cfg: cfg, c: c, apiserver: cs.Discovery().RESTClient()}

	if len(cfg.rates) > 0 {
		return 0, b.steadyMode(ctx)
	}

	if cfg.foreignConfigMaps > 0 {
		if err := createForeignConfigMaps(ctx, c, cfg.foreignConfigMaps, cfg.foreignConfigMapKiB<<10); err != nil {
			return 0, err
		}
		if !cfg.keepForeign {
			defer func() {
				if err := deleteForeignConfigMaps(context.WithoutCancel(ctx), c); err != nil {
					logf("bench: deleting the foreign ConfigMaps: %v", err)
				}
			}()
		}
	}
	// Every variant's N Pods, and the previous variant's still going.
	if err := ensurePodCapacity(ctx, c, 2*slices.Max(cfg.ns)+1000); err != nil {
		return 0, err
	}
	var results []result
	for i, n := range cfg.ns {
		run := 1 + countOf(cfg.ns[:i], n)
		first := floorsFirst(cfg.floorLast, cfg.alternate, run)
		runs := b.variants(n, run, first)
		// Once per N: a repeated N (three runs) finds the cluster warm.
		if b.warmUpAt(n) && run == 1 {
			logf("warm-up N=%d: the floor once, not measured", n)
			if _, err := b.runFloor(ctx, n); err != nil {
				return 0, fmt.Errorf("warm-up: %w", err)
			}
			b.stages = b.stages[:len(b.stages)-1]
		}
		for _, measure := range runs {
			r, err := measure(ctx, n)
			var cleanUp *cleanUpError
			if err == nil || errors.As(err, &cleanUp) {
				// Measured, even if its clean-up failed.
				r.operatorFirst = !first
				results = append(results, r)
			}
			if err != nil {
				if len(results) > 0 {
					fmt.Println(b.tables(results))
				}
				return 0, err
			}
		}
		if cfg.out != "" && i < len(cfg.ns)-1 {
			// A long run interrupted later keeps the tables of the Ns done.
			if err := os.WriteFile(cfg.out, []byte(b.tables(results)+"\n"), 0o644); err != nil {
				return 0, err
			}
			logf("bench: the tables so far are in %s", cfg.out)
		}
	}
	table := b.tables(results)
	fmt.Println(table)
	if cfg.out != "" {
		if err := os.WriteFile(cfg.out, []byte(table+"\n"), 0o644); err != nil {
			return 0, err
		}
	}
	if len(b.failed) > 0 {
		for _, f := range b.failed {
			fmt.Fprintln(os.Stderr, "FAIL:", f)
		}
		return 1, nil
	}
	return 0, nil
}

// ensureWorkDir makes -work-dir, or a temporary directory when it is unset.
func ensureWorkDir(cfg *config) error {
	if cfg.workDir != "" {
		return os.MkdirAll(cfg.workDir, 0o755)
	}
	var err error
	cfg.workDir, err = os.MkdirTemp("", "sunstrider-bench-")
	return err
}

// warmUpAt tells whether the floor runs once, unmeasured, before the
// variants of n (-warm-up). The first variant on a cluster pays less than
// the later ones (docs/performance.md): a discarded floor puts every
// measured variant on a cluster that has already made and deleted N of
// everything. The operator in two modes (-child-access) is two variants.
func (b *bench) warmUpAt(n int) bool {
	return b.cfg.warmUp && (b.withReferences(n) || len(b.cfg.childAccess) > 1)
}

// withReferences tells whether the floors and the seed design run at n
// (-references, -references-max).
func (b *bench) withReferences(n int) bool {
	return b.cfg.references && (b.cfg.referencesMax <= 0 || n <= b.cfg.referencesMax)
}

// variants are the measurements of the run-th run of n (from 1), in the
// order they run: the floors before the operator when floorsFirst.
func (b *bench) variants(n, run int, floorsFirst bool) []func(context.Context, int) (result, error) {
	var runs []func(context.Context, int) (result, error)
	if b.cfg.operator {
		if len(b.cfg.childAccess) == 0 {
			runs = append(runs, func(ctx context.Context, n int) (result, error) { return b.runOperator(ctx, n, "") })
		}
		for _, mode := range b.cfg.childAccess {
			runs = append(runs, func(ctx context.Context, n int) (result, error) { return b.runOperator(ctx, n, mode) })
		}
		if b.cfg.webhooksOff {
			runs = append(runs, func(ctx context.Context, n int) (result, error) { return b.runOperator(ctx, n, webhooksOff) })
		}
	}
	if !b.withReferences(n) {
		return runs
	}
	var floors []func(context.Context, int) (result, error)
	if b.cfg.floor {
		floors = append(floors, b.runFloor)
	}
	if b.cfg.appFloor {
		floors = append(floors, b.runAppFloor)
	}
	if !floorsFirst {
		logf("N=%d, run %d: the operator first, then the floors", n, run)
		runs = append(runs, floors...)
	} else {
		runs = append(floors, runs...)
	}
	if b.cfg.seed {
		runs = append(runs, b.runSeed)
	}
	return runs
}

// steadyMode runs the steady-rate mode and prints its tables.
func (b *bench) steadyMode(ctx context.Context) error {
	cfg := b.cfg
	logf("bench: steady-rate mode, rates %v/s for %s each on %d base Applications", cfg.rates, cfg.rateWindow, cfg.base)
	steady, err := b.runSteady(ctx)
	table := renderSteady(steady, cfg.base, cfg.rateWindow)
	if cost := renderSteadyCost(b.cost); cost != "" {
		table = cost + "\n\n" + table
	}
	if bisect := renderBisect(b.bisected); bisect != "" {
		table += "\n\n" + bisect
	}
	fmt.Println(table)
	if cfg.out != "" && table != "" {
		if werr := os.WriteFile(cfg.out, []byte(table+"\n"), 0o644); werr != nil {
			return werr
		}
	}
	return err
}

// tables renders every table of the results measured so far.
func (b *bench) tables(results []result) string {
	results = numberRuns(results)
	table := renderTable(results, b.cfg.perNamespace) + "\n\n" + renderProcesses(results) + "\n\n" +
		renderRequests(results)
	if w := renderWatches(results); w != "" {
		table += "\n\n" + w
	}
	if q := renderQueues(results); q != "" {
		table += "\n\n" + q
	}
	if p := b.renderProfileParts(results); p != "" {
		table += "\n\n" + p
	}
	if p := b.renderProfiles(results); p != "" {
		table += "\n\n" + p
	}
	if v := renderVerdicts(results); v != "" {
		table += "\n\n" + v
	}
	if wh := renderWebhooks(results); wh != "" {
		table += "\n\n" + wh
	}
	if access := renderAccess(results); access != "" {
		table += "\n\n" + access
	}
	if curve := renderCurve(results); curve != "" {
		table += "\n\n" + curve
	}
	if st := renderStages(b.stages); st != "" {
		table += "\n\n" + st
	}
	if b.weights != "" {
		table += "\n\n" + b.weights
	}
	return table
}

// result is one variant at one N. Negative numbers are "not measured".
type result struct {
	variant       string
	n             int
	converge      time.Duration
	p50, p99      time.Duration
	writesMean    float64
	writesMedian  float64
	eventsPerApp  float64
	idleWrites    int
	restartWrites int
	restartReady  time.Duration
	// restartReconciled is when the restarted operator had reconciled
	// every Application of the cluster, from its start.
	restartReconciled    time.Duration
	peakRSS, heapPerApp  float64
	cpu                  float64
	statusWritesMedian   float64
	otherWritesPerAppAvg float64
	// requests is what kube-apiserver served over the same span, by kind
	// (parseRequests).
	requests map[string]float64
	// machineBusy is the CPU time the whole machine spent busy from the
	// first create to convergence; machineShare its share of all CPUs.
	machineBusy, machineShare float64
	// processes is the CPU seconds of each busy process over the same span.
	processes map[string]float64
	// webhooks are the admission webhook calls kube-apiserver timed over
	// the same span, by webhook and operation (webhooksSince).
	webhooks map[webhookKey]*dto.Histogram
	// watches is what kube-apiserver sent its watchers over the same
	// span, by resource (watches.go).
	watches watchReading
	// queues is what kube-controller-manager's work queues did over the
	// same span, by queue (queues.go).
	queues queueReading
	// apiserverProfile is kube-apiserver's CPU profile over the first
	// -apiserver-profile of the span (profile.go); nil without one.
	apiserverProfile []byte
	// childAccess is the operator's spec.childAccess mode when the
	// benchmark set it (-child-access).
	childAccess configv1alpha1.ChildAccess
	// busy says why this variant compares with nothing (settle): the
	// machine was not quiet when it started; "" when it was.
	busy string
	// operatorFirst is true when the operator ran before the floors in
	// this result's run (-floor-last, -alternate).
	operatorFirst bool
	// run is which run of its variant at its N this is (1-based) and runs
	// how many there were, for the tables (numberRuns).
	run, runs int
}

func na() result {
	return result{idleWrites: -1, restartWrites: -1, peakRSS: -1, heapPerApp: -1, cpu: -1, eventsPerApp: -1,
		machineBusy: -1}
}

// installOperatorConfig applies the CRDs and the webhook configurations
// pointing at the local operator's webhook port.
func (b *bench) installOperatorConfig(ctx context.Context) error {
	ca, err := writeServingCert(filepath.Join(b.cfg.workDir, "certs"))
	if err != nil {
		return err
	}
	render := exec.CommandContext(ctx, "sh", "-c", fmt.Sprintf(
		"%q build config/dev | go run ./hack/devconfig -base https://localhost:%d", b.cfg.kustomize, b.cfg.ports.webhook))
	render.Stderr = os.Stderr
	rendered, err := render.Output()
	if err != nil {
		return fmt.Errorf("rendering config/dev: %w", err)
	}
	list, err := withCABundle(rendered, ca)
	if err != nil {
		return err
	}
	apply := exec.CommandContext(ctx, b.cfg.kubectl, "--kubeconfig", b.cfg.kubeconfig,
		"apply", "--server-side", "--force-conflicts", "-f", "-")
	apply.Stdin = bytes.NewReader(list)
	if out, err := apply.CombinedOutput(); err != nil {
		return fmt.Errorf("installing config/dev: %w\n%s", err, out)
	}
	// The manager refuses to start while a kind it serves is unknown to
	// the API server: wait for every CRD, not only the Application's.
	names, err := crdNames(list)
	if err != nil {
		return err
	}
	for _, name := range names {
		if err := waitEstablished(ctx, b.c, name); err != nil {
			return err
		}
	}
	return nil
}

// crdNames returns the names of the CustomResourceDefinitions in list, a
// JSON List (withCABundle).
func crdNames(list []byte) ([]string, error) {
	var l struct {
		Items []metav1.PartialObjectMetadata `json:"items"`
	}
	if err := json.Unmarshal(list, &l); err != nil {
		return nil, fmt.Errorf("reading the rendered config/dev: %w", err)
	}
	var names []string
	for _, item := range l.Items {
		if item.Kind == "CustomResourceDefinition" {
			names = append(names, item.Name)
		}
	}
	return names, nil
}

// waitEstablished waits until the CRD name is Established. A CRD just
// created has no conditions yet, which `kubectl wait` reports as an error
// instead of waiting.
func waitEstablished(ctx context.Context, c client.Client, name string) error {
	crd := &unstructured.Unstructured{}
	crd.SetAPIVersion("apiextensions.k8s.io/v1")
	crd.SetKind("CustomResourceDefinition")
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true,
		func(ctx context.Context) (bool, error) {
			if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			conditions, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
			for _, c := range conditions {
				if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
					return true, nil
				}
			}
			return false, nil
		})
	if err != nil {
		return fmt.Errorf("waiting for CRD %s to be Established: %w", name, err)
	}
	return nil
}

// withCABundle sets caBundle in every webhook client configuration of the
// rendered YAML stream and returns the objects as one JSON List.
func withCABundle(rendered, ca []byte) ([]byte, error) {
	bundle := base64.StdEncoding.EncodeToString(ca)
	reader := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(rendered), 4096)
	items := []any{}
	for {
		obj := map[string]any{}
		if err := reader.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, err
		}
		if len(obj) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: obj}
		switch u.GetKind() {
		case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
			hooks, _, _ := unstructured.NestedSlice(obj, "webhooks")
			for _, h := range hooks {
				_ = unstructured.SetNestedField(h.(map[string]any), bundle, "clientConfig", "caBundle")
			}
			_ = unstructured.SetNestedSlice(obj, hooks, "webhooks")
		case "CustomResourceDefinition":
			if _, found, _ := unstructured.NestedMap(obj, "spec", "conversion", "webhook", "clientConfig"); found {
				_ = unstructured.SetNestedField(obj, bundle, "spec", "conversion", "webhook", "clientConfig", "caBundle")
			}
		}
		items = append(items, obj)
	}
	return json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
}

// installWithoutWebhooks installs the CRDs (installOperatorConfig), then
// deletes the operator's webhook configurations: the references have none,
// and the operator is not running to answer them.
func (b *bench) installWithoutWebhooks(ctx context.Context) error {
	if err := b.installOperatorConfig(ctx); err != nil {
		return err
	}
	for _, obj := range []client.Object{
		&admissionregistrationv1.MutatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: "sunstrider-operator-mutating-webhook-configuration"}},
		&admissionregistrationv1.ValidatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: "sunstrider-operator-validating-webhook-configuration"}},
	} {
		if err := b.c.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

func (b *bench) startOperator(ctx context.Context, label string, extra ...string) (*proc, error) {
	args := append([]string{b.cfg.manager,
		"--operator-namespace=" + operatorNamespace,
		"--cert-mode=external",
		fmt.Sprintf("--webhook-port=%d", b.cfg.ports.webhook),
		"--webhook-cert-path=" + filepath.Join(b.cfg.workDir, "certs"),
		fmt.Sprintf("--health-probe-bind-address=:%d", b.cfg.ports.probe),
		fmt.Sprintf("--metrics-bind-address=:%d", b.cfg.ports.metrics),
		"--metrics-secure=false",
		fmt.Sprintf("--pprof-bind-address=:%d", b.cfg.ports.pprof),
	}, append(extra, b.cfg.managerArgs...)...)
	kubeconfig := b.cfg.kubeconfig
	if b.cfg.serviceAccount != "" {
		var err error
		if kubeconfig, err = b.asServiceAccount(ctx, b.cfg.serviceAccount); err != nil {
			return nil, err
		}
	}
	p, err := startProc("operator", filepath.Join(b.cfg.workDir, label+".log"), b.cfg.ports,
		[]string{"KUBECONFIG=" + kubeconfig}, args...)
	if err != nil {
		return nil, err
	}
	if err := p.waitReady(ctx, 2*time.Minute); err != nil {
		p.stop()
		return nil, err
	}
	return p, nil
}

// applicationController is the operator's Application controller, as named
// in its metrics.
const applicationController = "apps-application"

// waitReconciles waits until p has finished at least n reconciles of
// controller without error (controller_runtime_reconcile_total, results
// other than "error") and returns how many it counted.
func waitReconciles(ctx context.Context, p *proc, controller string, n int, timeout time.Duration) (int, error) {
	deadline := time.Now().Add(timeout)
	for {
		m, err := p.metrics()
		if err != nil {
			return 0, err
		}
		got := 0.0
		for _, result := range []string{"success", "requeue", "requeue_after"} {
			got += m[fmt.Sprintf(`controller_runtime_reconcile_total{controller=%q,result=%q}`, controller, result)]
		}
		if int(got) >= n {
			return int(got), nil
		}
		if time.Now().After(deadline) {
			return int(got), fmt.Errorf("%.0f reconciles by %s in %s, %d wanted", got, controller, timeout, n)
		}
		select {
		case <-ctx.Done():
			return int(got), ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// quiesce waits until p has made no write for 3 s (at most 2 minutes) and
// returns its write count then: asynchronous writes (Events) that belong to
// the creation are counted with it, not with the idle window.
func quiesce(p *proc) (int, error) {
	last, err := p.writes()
	if err != nil {
		return 0, err
	}
	stable := time.Now()
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); {
		time.Sleep(500 * time.Millisecond)
		w, err := p.writes()
		if err != nil {
			return 0, err
		}
		if w != last {
			last, stable = w, time.Now()
		} else if time.Since(stable) >= 3*time.Second {
			return w, nil
		}
	}
	return last, nil
}

func (b *bench) runFloor(ctx context.Context, n int) (result, error) {
	ns := b.spread("bench-floor", n)
	logf("floor N=%d: a plain client creates %d Deployments and Services", n, n)
	if err := createNamespaces(ctx, b.c, ns); err != nil {
		return result{}, err
	}
	t := newTracker(n)
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	if err := watchReady(wctx, b.c, ns, &appsv1.DeploymentList{}, deploymentAvailable, t); err != nil {
		return result{}, err
	}
	stages := newStageRecorder()
	if err := stages.watch(wctx, b.c, ns, false); err != nil {
		return result{}, err
	}
	busy := b.settle(ctx, "floor", n)
	span, err := startCPUSpan(ctx, b.apiserver, b.cfg.apiserverProfile)
	if err != nil {
		return result{}, err
	}
	if err := createAll(ctx, n, t, func(ctx context.Context, i int) error {
		for _, obj := range floorObjects(ns.of(i), itemName(i)) {
			if err := b.c.Create(ctx, obj); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return result{}, err
	}
	if err := waitConverged(ctx, t, b.cfg.timeout, "floor"); err != nil {
		return result{}, err
	}
	r := na()
	r.busy = busy
	if err := span.end(ctx, &r); err != nil {
		return result{}, err
	}
	stop()
	r.variant, r.n = "floor (plain client)", n
	t.timings(&r)
	b.stages = append(b.stages, stages.summarize(t, "floor", n, stageAvailable))
	r.writesMean, r.writesMedian = 2, 2
	logf("floor N=%d converged in %s; deleting the namespace", n, r.converge.Round(time.Millisecond))
	return r, cleanUp(deleteNamespaces(ctx, b.c, ns))
}

// operatorNames are the variant name, namespace prefix and log label of
// the operator's run at n in mode (runOperator).
func operatorNames(mode configv1alpha1.ChildAccess, n int) (variant, prefix, label string) {
	if mode == "" {
		return "operator", "bench-operator", fmt.Sprintf("operator-%d", n)
	}
	lower := strings.ReplaceAll(strings.ToLower(string(mode)), " ", "-")
	return operatorVariant(mode), "bench-operator-" + lower, fmt.Sprintf("operator-%s-%d", lower, n)
}

// webhooksOff is runOperator's mode for the operator with its webhooks off
// (-webhooks-off): no spec.childAccess is set, none is checked.
const webhooksOff configv1alpha1.ChildAccess = "webhooks off"

// runOperator measures the operator at n, in child access mode (its
// OperatorConfiguration's spec.childAccess set first; "": left as it is),
// or with its webhooks off (webhooksOff).
func (b *bench) runOperator(ctx context.Context, n int, mode configv1alpha1.ChildAccess) (result, error) {
	variant, prefix, label := operatorNames(mode, n)
	var extra []string
	ns := b.spread(prefix, n)
	install := b.installOperatorConfig
	if mode == webhooksOff {
		install, extra, mode = b.installWithoutWebhooks, []string{"--enable-webhooks=false"}, ""
	}
	if err := install(ctx); err != nil {
		return result{}, err
	}
	if mode != "" {
		if err := setChildAccess(ctx, b.c, mode); err != nil {
			return result{}, err
		}
	}
	if err := createNamespaces(ctx, b.c, ns); err != nil {
		return result{}, err
	}
	logf("%s N=%d: starting %s", variant, n, b.cfg.manager)
	p, err := b.startOperator(ctx, label, extra...)
	if err != nil {
		return result{}, err
	}
	defer p.stop()
	if mode != "" {
		if err := waitChildAccess(ctx, b.c, mode); err != nil {
			return result{}, fmt.Errorf("%w (log: %s)", err, p.logPath)
		}
	}
	r, err := b.measureController(ctx, p, ns, n, variant, true)
	r.childAccess = mode
	if err != nil {
		return r, err
	}
	if r.idleWrites != 0 {
		b.failed = append(b.failed, fmt.Sprintf("N=%d: the %s wrote %d times in the %s idle window",
			n, variant, r.idleWrites, b.cfg.idle))
	}

	if b.cfg.restart {
		logf("%s N=%d: restarting the operator", variant, n)
		var before configv1alpha1.OperatorConfiguration
		if mode != "" {
			if err := b.c.Get(ctx, client.ObjectKey{Name: configv1alpha1.ConfigurationName}, &before); err != nil {
				return r, err
			}
		}
		p.stop()
		start := time.Now()
		// At debug level the restarted operator logs each status write with
		// the parts that changed, so a write here can be explained.
		p2, err := b.startOperator(ctx, label+"-restart", append(extra, "--zap-log-level=debug")...)
		if err != nil {
			return r, err
		}
		defer p2.stop()
		r.restartReady = time.Since(start)
		// Silence proves something only once the restarted operator has
		// reconciled every Application: wait for that, then the idle window.
		apps := &sunappsv1.ApplicationList{}
		if err := b.c.List(ctx, apps); err != nil {
			return r, err
		}
		reconciles, err := waitReconciles(ctx, p2, applicationController, len(apps.Items), b.cfg.timeout)
		if err != nil {
			return r, fmt.Errorf("the restarted operator: %w (log: %s)", err, p2.logPath)
		}
		reconciled := time.Since(start)
		r.restartReconciled = reconciled
		time.Sleep(b.cfg.idle)
		if r.restartWrites, err = p2.writes(); err != nil {
			return r, err
		}
		if mode != "" {
			logWrite, err := logLevelStatusWrite(ctx, b.c, &before)
			if err != nil {
				return r, err
			}
			if logWrite {
				// The benchmark's OperatorConfiguration has no logLevel: the
				// restart's --zap-log-level=debug is in effect, and the
				// operator rightly writes so in its status. That write is
				// the benchmark's doing, not a restart's.
				r.restartWrites--
				logf("%s N=%d: not counted after the restart: the OperatorConfiguration's status write of the "+
					"log level the restart sets (--zap-log-level=debug)", variant, n)
			}
		}
		logf("%s N=%d: %d writes after the restart: %d reconciles of the %d Applications of the cluster "+
			"in %s (ready after %s), then a %s idle window", variant, n, r.restartWrites, reconciles, len(apps.Items),
			reconciled.Round(time.Millisecond), r.restartReady.Round(time.Millisecond), b.cfg.idle)
		if r.restartWrites != 0 {
			b.failed = append(b.failed, fmt.Sprintf("N=%d: the restarted %s wrote %d times (see %s)",
				n, variant, r.restartWrites, p2.logPath))
			printMatchingLines(p2.logPath, "Wrote ")
		}
		p2.stop()
	}
	p.stop()
	if b.cfg.keep {
		return r, nil
	}
	logf("%s N=%d: deleting the namespace", variant, n)
	return r, cleanUp(deleteNamespaces(ctx, b.c, ns))
}

func (b *bench) runSeed(ctx context.Context, n int) (result, error) {
	ns := b.spread("bench-seed", n)
	if err := b.installWithoutWebhooks(ctx); err != nil {
		return result{}, err
	}
	if err := createNamespaces(ctx, b.c, ns); err != nil {
		return result{}, err
	}
	self, err := os.Executable()
	if err != nil {
		return result{}, err
	}
	logf("seed design N=%d: starting the reference controller", n)
	p, err := startProc("seed controller", filepath.Join(b.cfg.workDir, fmt.Sprintf("seed-%d.log", n)), b.cfg.ports,
		[]string{"KUBECONFIG=" + b.cfg.kubeconfig}, self, "-seed-controller",
		fmt.Sprintf("-metrics-port=%d", b.cfg.ports.metrics), fmt.Sprintf("-probe-port=%d", b.cfg.ports.probe),
		fmt.Sprintf("-pprof-port=%d", b.cfg.ports.pprof))
	if err != nil {
		return result{}, err
	}
	defer p.stop()
	if err := p.waitReady(ctx, time.Minute); err != nil {
		return result{}, err
	}
	r, err := b.measureController(ctx, p, ns, n, "seed design", false)
	if err != nil {
		return r, err
	}
	p.stop()
	logf("seed design N=%d: deleting the namespace", n)
	return r, cleanUp(deleteNamespaces(ctx, b.c, ns))
}

// spread is where variant puts its n items (-per-namespace).
func (b *bench) spread(variant string, n int) spread {
	return spread{prefix: fmt.Sprintf("%s-%d", variant, n), n: n, per: b.cfg.perNamespace}
}

// settle waits for a quiet machine before a variant starts creating
// (waitQuiet) and logs how long that took. It returns why the variant's
// figures compare with nothing ("" when the machine got quiet): a variant
// that starts while the machine is still busy (the previous variant's
// clean-up, another program) pays for that work too, so the table gives it
// no ratio rather than a wrong one.
func (b *bench) settle(ctx context.Context, variant string, n int) string {
	waited, share, quiet, err := waitQuiet(ctx, b.cfg.quietWait)
	switch {
	case err != nil:
		logf("%s N=%d: reading /proc/stat: %v", variant, n, err)
		return fmt.Sprintf("machine load unknown (%v)", err)
	case !quiet:
		busy := fmt.Sprintf("machine still %.0f %% busy after %s", 100*share, waited.Round(time.Second))
		logf("%s N=%d: the %s; its figures compare with nothing", variant, n, busy)
		return busy
	default:
		logf("%s N=%d: the machine is quiet (%.0f %% busy) after %s", variant, n, 100*share, waited.Round(time.Second))
		return ""
	}
}

// measureController creates n Applications in ns for the running controller
// p and measures convergence, writes, memory and CPU.
func (b *bench) measureController(ctx context.Context, p *proc, ns spread, n int, variant string,
	requireCondition bool) (result, error) {
	r := na()
	r.variant, r.n = variant, n
	r.busy = b.settle(ctx, variant, n) // caches synced, start-up writes done, the previous variant cleaned up
	base, err := p.settledHeap()
	if err != nil {
		return r, err
	}
	w0, err := p.writes()
	if err != nil {
		return r, err
	}
	m0, err := p.metrics()
	if err != nil {
		return r, err
	}
	cpu0, err := p.cpuSeconds()
	if err != nil {
		return r, err
	}

	t := newTracker(n)
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	if err := watchReady(wctx, b.c, ns, &sunappsv1.ApplicationList{}, applicationReady(requireCondition), t); err != nil {
		return r, err
	}
	stages := newStageRecorder()
	if err := stages.watch(wctx, b.c, ns, true); err != nil {
		return r, err
	}
	logf("%s N=%d: creating %d Applications", variant, n, n)
	span, err := startCPUSpan(ctx, b.apiserver, b.cfg.apiserverProfile)
	if err != nil {
		return r, err
	}
	createStart := time.Now()
	if b.cfg.cpuProfile > 0 {
		path := filepath.Join(b.cfg.workDir, fmt.Sprintf("%s-%d-cpu.pprof", fileName(variant), n))
		go func() {
			if err := p.saveProfile(fmt.Sprintf("profile?seconds=%d", int(b.cfg.cpuProfile.Seconds())), path); err != nil {
				logf("saving the CPU profile: %v", err)
			}
		}()
	}
	if err := createAll(ctx, n, t, func(ctx context.Context, i int) error {
		return b.c.Create(ctx, newApplication(ns.of(i), itemName(i)))
	}); err != nil {
		return r, err
	}
	logf("%s N=%d: created in %s", variant, n, time.Since(createStart).Round(time.Millisecond))
	if err := waitConverged(ctx, t, b.cfg.timeout, variant); err != nil {
		return r, fmt.Errorf("%w (log: %s)", err, p.logPath)
	}
	if err := span.end(ctx, &r); err != nil {
		return r, err
	}
	t.timings(&r)
	b.stages = append(b.stages, stages.summarize(t, variant, n, stageReady))
	logf("%s N=%d converged in %s (p50 %s, p99 %s)", variant, n, r.converge.Round(time.Millisecond),
		r.p50.Round(time.Millisecond), r.p99.Round(time.Millisecond))

	w1, err := quiesce(p)
	if err != nil {
		return r, err
	}
	if r.cpu, err = p.cpuSeconds(); err != nil {
		return r, err
	}
	r.cpu -= cpu0
	stop()
	b.writesPerApp(ctx, &r, t, ns, w1-w0)
	if m1, err := p.metrics(); err == nil && requireCondition {
		// The operator's work per Application, beside its writes.
		logf("%s N=%d: %.2f reconciles per Application", variant, n,
			(reconcilesOf(m1, applicationController)-reconcilesOf(m0, applicationController))/float64(n))
	}

	logf("%s N=%d: idle window of %s", variant, n, b.cfg.idle)
	time.Sleep(b.cfg.idle)
	w2, err := p.writes()
	if err != nil {
		return r, err
	}
	r.idleWrites = w2 - w1
	heap, err := p.settledHeap()
	if err != nil {
		return r, err
	}
	r.heapPerApp = (heap - base) / float64(n)
	profile := filepath.Join(b.cfg.workDir, fmt.Sprintf("%s-%d-heap.pprof", fileName(variant), n))
	if err := p.saveProfile("heap", profile); err != nil {
		logf("saving the heap profile: %v", err)
	}
	if r.peakRSS, err = p.peakRSS(); err != nil {
		return r, err
	}
	idleRSS, err := p.idleRSS()
	if err != nil {
		return r, err
	}
	logf("%s N=%d: %d idle writes, heap %.0f KiB above the empty baseline (%.0f KiB), peak RSS %.1f MiB, "+
		"idle RSS %.1f MiB", variant, n, r.idleWrites, (heap-base)/1024, base/1024, r.peakRSS/(1<<20), idleRSS/(1<<20))
	if requireCondition { // the operator, whose cache this weighs
		w, err := weighObjects(ctx, b.c, ns.of(0), itemName(0))
		if err != nil {
			return r, err
		}
		b.weights = fmt.Sprintf("Objects cached per Application (N=%d, read back from the cluster):\n\n%s",
			n, renderWeights(w))
		logf("%s N=%d: the objects cached per Application decode to %.2f KiB (table at the end)", variant, n,
			totalHeap(w)/1024)
	}
	return r, nil
}

// writesPerApp splits the total writes: status writes per Application (one
// watch MODIFIED event each), Events per Application (listed), and the rest
// (children applies, failed writes) spread evenly.
func (b *bench) writesPerApp(ctx context.Context, r *result, t *tracker, ns spread, total int) {
	events, eventTotal, err := eventsByObject(ctx, b.c, ns, reportingController)
	if err != nil {
		logf("listing events: %v", err)
	}
	t.mu.Lock()
	statusTotal := 0
	for _, m := range t.modified {
		statusTotal += m
	}
	other := float64(total-statusTotal-eventTotal) / float64(r.n)
	per := make([]float64, 0, r.n)
	status := make([]float64, 0, r.n)
	for name := range t.created {
		per = append(per, other+float64(t.modified[name]+events[name]))
		status = append(status, float64(t.modified[name]))
	}
	t.mu.Unlock()
	r.writesMean = float64(total) / float64(r.n)
	r.writesMedian = medianF(per)
	r.statusWritesMedian = medianF(status)
	r.eventsPerApp = float64(eventTotal) / float64(r.n)
	r.otherWritesPerAppAvg = other
	logf("%s N=%d: %d writes (%.2f/app: %.2f children and other, median %.0f status, %.2f Events)", r.variant, r.n,
		total, r.writesMean, other, r.statusWritesMedian, r.eventsPerApp)
}

func medianF(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	for i := 1; i < len(s); i++ { // insertion sort is plenty for N <= a few thousand
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s[len(s)/2]
}

func renderTable(results []result, perNamespace int) string {
	var sb strings.Builder
	sb.WriteString("| N | variant | converged in | create→Ready p50 | p99 | writes/app median (mean) " +
		"| of which status (median) / Events (mean) | idle writes | writes after restart " +
		"| peak RSS | heap/app | CPU s | machine CPU s (busy) | ratio |\n")
	sb.WriteString("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, r := range results {
		var ratios []string
		floor, hasFloor := sameRun(results, r, "floor (plain client)")
		appFloor, hasAppFloor := sameRun(results, r, appFloorVariant)
		op, hasOp := firstOperator(results, r.n)
		switch {
		case isOperator(r.variant):
			if hasFloor {
				ratios = append(ratios, convergeRatio("operator/floor", "**%.2f**", r, floor))
			}
			if hasAppFloor {
				ratios = append(ratios, convergeRatio("operator/Application floor", "**%.2f**", r, appFloor))
			}
		case r.variant == appFloorVariant:
			if hasFloor {
				ratios = append(ratios, convergeRatio("Application floor/floor", "%.2f", r, floor))
			}
		case r.variant == "seed design":
			if hasOp {
				ratios = append(ratios, convergeRatio("seed/"+op.variant, "**%.1f**", r, op))
			}
		}
		if len(ratios) == 0 && r.busy != "" {
			ratios = append(ratios, "no ratio: "+r.busy)
		}
		ratio := strings.Join(ratios, ", ")
		split := "-"
		if r.eventsPerApp >= 0 {
			split = fmt.Sprintf("%.0f / %.2f", r.statusWritesMedian, r.eventsPerApp)
		}
		machine := "-"
		if r.machineBusy >= 0 {
			machine = fmt.Sprintf("%.1f (%.0f %%)", r.machineBusy, 100*r.machineShare)
		}
		fmt.Fprintf(&sb, "| %d | %s | %.1f s | %s | %s | %.1f (%.2f) | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			r.n, r.name(), r.converge.Seconds(), dur(r.p50), dur(r.p99), r.writesMedian, r.writesMean, split,
			intOrNA(r.idleWrites), intOrNA(r.restartWrites), bytesOrNA(r.peakRSS, "MiB"), bytesOrNA(r.heapPerApp, "KiB"),
			floatOrNA(r.cpu), machine, ratio)
	}
	placement := "all items of a variant in one namespace"
	if perNamespace > 0 {
		placement = fmt.Sprintf("%d items per namespace", perNamespace)
	}
	fmt.Fprintf(&sb, "\n%d CPUs, %s; kwok cluster, QPS limits off; %d parallel creates; %s.",
		runtime.NumCPU(), runtime.Version(), createWorkers, placement)
	return sb.String()
}

// convergeRatio is "name value" for r's convergence time over ref's, or,
// when either started on a busy machine (result.busy), "name: no ratio" and
// why: a ratio against a variant that paid for other work is wrong either way.
func convergeRatio(name, format string, r, ref result) string {
	if busy := cmpBusy(r, ref); busy != "" {
		return fmt.Sprintf("%s: no ratio (%s)", name, busy)
	}
	return name + " " + fmt.Sprintf(format, r.converge.Seconds()/ref.converge.Seconds())
}

func dur(d time.Duration) string {
	if d >= 10*time.Second {
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	if d > 0 && d < time.Millisecond {
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
}

func intOrNA(v int) string {
	if v < 0 {
		return "-"
	}
	return strconv.Itoa(v)
}

func floatOrNA(v float64) string {
	if v < 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", v)
}

func bytesOrNA(v float64, unit string) string {
	if v < 0 && unit == "MiB" {
		return "-"
	}
	if unit == "MiB" {
		return fmt.Sprintf("%.0f MiB", v/(1<<20))
	}
	if v == -1 {
		return "-"
	}
	return fmt.Sprintf("%.1f KiB", v/1024)
}

// printMatchingLines prints the lines of the file at path that contain
// substr, to explain unexpected writes next to the failure.
func printMatchingLines(path, substr string) {
	data, err := os.ReadFile(path)
	if err != nil {
		logf("reading %s: %v", path, err)
		return
	}
	for line := range strings.Lines(string(data)) {
		if strings.Contains(line, substr) {
			logf("  %s", strings.TrimSpace(line))
		}
	}
}

// cpuColumns are the processes renderProcesses shows on their own (the
// kernel truncates command names to 15 bytes); the rest is summed as other.
var cpuColumns = []string{
	"kube-apiserver", "etcd", "kube-controller", "kube-scheduler", "kwok-controller", "manager", "bench",
}

// renderProcesses tabulates, per run, the CPU seconds of the processes that
// were busy from the first create to convergence: where the machine's time
// went. The operator is "manager"; "bench" is this benchmark (the floor's
// client, the watches) and the seed design, which runs in a child process
// of it.
func renderProcesses(results []result) string {
	var sb strings.Builder
	sb.WriteString("CPU seconds by process, first create to convergence:\n\n| N | variant | " +
		strings.Join(cpuColumns, " | ") + " | other | all |\n|---:|---|" + strings.Repeat("---:|", len(cpuColumns)+2) + "\n")
	for _, r := range results {
		if r.processes == nil {
			continue
		}
		variant := r.name()
		if r.busy != "" {
			variant += " (started on a busy machine)"
		}
		fmt.Fprintf(&sb, "| %d | %s |", r.n, variant)
		all := writeProcessCells(&sb, r.processes, 1, "%.1f")
		fmt.Fprintf(&sb, " %.1f |\n", all)
	}
	return strings.TrimSuffix(sb.String(), "\n")
}

// writeProcessCells writes to sb a cell per cpuColumns process ("-" when
// it was not busy), then one for the other processes together, each value
// divided by div and printed with format; it returns the sum of all.
func writeProcessCells(sb *strings.Builder, processes map[string]float64, div float64, format string) float64 {
	var all, other float64
	for name, v := range processes {
		all += v
		if !slices.Contains(cpuColumns, name) {
			other += v
		}
	}
	for _, c := range cpuColumns {
		v, ok := processes[c]
		if !ok {
			sb.WriteString(" - |")
			continue
		}
		fmt.Fprintf(sb, " "+format+" |", v/div)
	}
	fmt.Fprintf(sb, " "+format+" |", other/div)
	return all
}
