// Command real measures, on the local cluster's real node (hack/real-node.sh:
// containerd, runc, a kubelet and kube-proxy), what a user of an Application
// feels against the same Deployment and ClusterIP Service applied directly:
//
//   - apply → first answer: from starting `kubectl apply -f` (the kubectl
//     binary, as a user runs it) to the first HTTP 200 from
//     http://<ClusterIP>:80/, one Pod of the test image (test/app, v1) per
//     run. The benchmark polls the Service for its ClusterIP every 20 ms,
//     then sends a GET every 20 ms (1 s timeout, a new connection each),
//     each from its own goroutine so that a request left hanging delays no
//     other. -n runs of each variant, alternated (the Application first in
//     odd pairs, the direct variant first in even ones), one at a time:
//     each run's objects are deleted and its Pods gone before the next.
//     Target: the Application's p99 at most the direct p99 + 0.5 s.
//   - spec change: 2 replicas (maxSurge 1, maxUnavailable 0) of v1, then
//     `kubectl apply` with v2, to the moment every request answers v2 (the
//     first of 20 v2 answers in a row), a client requesting through the
//     ClusterIP every 20 ms all along; its failed requests are counted.
//     -changes of each, alternated. No target: figures.
//
// Beside the figures: where each run's time went (when this process first
// saw the Service's ClusterIP, the Pod, the Pod Ready, a ready endpoint in
// the Service's EndpointSlice, the first answer), and in which runs a
// readiness probe failed before the run was measured (the kubelet's
// Unhealthy Events).
//
// The variants share a namespace of their own (-namespace, made afresh and
// deleted at the end); one unmeasured run of each comes first (-warm-up).
// `make bench-real` runs it on a fresh cluster with the operator run as
// `make dev` runs it (docs/performance.md):
//
//	go -C test build -o "$PWD/bin/test-bench-real" ./bench/real
//	bin/test-bench-real -kubeconfig bin/bench-real/kubeconfig -kubectl bin/k8s/v1.37.2/kubectl -n 20
//
// The Markdown report goes to stdout (and -out), progress to stderr. It
// runs as root on the host, where ClusterIPs route (kube-proxy's rules).
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

const (
	// probeEvery is how often the Service is polled and the app requested.
	probeEvery = 20 * time.Millisecond
	// requestTimeout bounds one request.
	requestTimeout = time.Second
	// runTimeout bounds one run (an apply to its answer, a spec change,
	// a clean-up): a run that takes longer fails the benchmark.
	runTimeout = 3 * time.Minute
)

type config struct {
	kubeconfig string
	kubectl    string
	namespace  string
	out        string
	workDir    string
	n          int
	changes    int
	warmUp     bool
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05 ")+format+"\n", args...)
}

func main() {
	cfg := config{}
	kubectl := "kubectl"
	if bin := os.Getenv("K8S_BIN"); bin != "" {
		kubectl = filepath.Join(bin, "kubectl")
	}
	flag.StringVar(&cfg.kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"),
		"kubeconfig of the cluster (default $KUBECONFIG).")
	flag.StringVar(&cfg.kubectl, "kubectl", kubectl, "kubectl binary (default $K8S_BIN/kubectl when K8S_BIN is set).")
	flag.IntVar(&cfg.n, "n", 20, "Pairs of apply → first answer runs (one of each variant per pair).")
	flag.IntVar(&cfg.changes, "changes", 5, "Pairs of spec changes (0: none).")
	flag.StringVar(&cfg.out, "out", "", "Also write the Markdown report to this file.")
	flag.StringVar(&cfg.namespace, "namespace", "bench-real", "Namespace of the runs (made afresh, deleted at the end).")
	flag.StringVar(&cfg.workDir, "work-dir", "", "Where the applied YAML files go (default: a temporary folder).")
	flag.BoolVar(&cfg.warmUp, "warm-up", true, "One unmeasured run of each variant first.")
	flag.Parse()
	if cfg.kubeconfig == "" || cfg.n < 1 || cfg.changes < 0 {
		fmt.Fprintln(os.Stderr, "real: -kubeconfig (or $KUBECONFIG) is required, -n must be at least 1, -changes at least 0")
		os.Exit(2)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	report, err := run(ctx, cfg)
	if report != "" {
		fmt.Print(report)
		if cfg.out != "" {
			if werr := os.WriteFile(cfg.out, []byte(report), 0o644); werr != nil {
				err = errors.Join(err, werr)
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "real:", err)
		os.Exit(1)
	}
}

// bench is one invocation's cluster and tools.
type bench struct {
	cfg   config
	cs    kubernetes.Interface
	httpc *http.Client
}

func run(ctx context.Context, cfg config) (string, error) {
	restCfg, err := clientcmd.BuildConfigFromFlags("", cfg.kubeconfig)
	if err != nil {
		return "", err
	}
	restCfg.QPS, restCfg.Burst = -1, 0
	cs, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return "", err
	}
	if cfg.workDir == "" {
		if cfg.workDir, err = os.MkdirTemp("", "bench-real-"); err != nil {
			return "", err
		}
		defer func() { _ = os.RemoveAll(cfg.workDir) }()
	} else if err := os.MkdirAll(cfg.workDir, 0o755); err != nil {
		return "", err
	}
	b := &bench{cfg: cfg, cs: cs, httpc: &http.Client{
		Timeout: requestTimeout,
		// A new connection for every request, as a new client's would be.
		Transport: &http.Transport{DisableKeepAlives: true},
	}}
	if err := b.prepare(ctx); err != nil {
		return "", err
	}
	defer b.deleteNamespace()

	var report strings.Builder
	fmt.Fprintf(&report, "Real containers, %s (%d CPUs, %s): an Application against the same Deployment and "+
		"Service applied directly, on node %s.\n\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"),
		runtime.NumCPU(), runtime.Version(), realNode)
	first, err := b.firstAnswers(ctx)
	if err != nil {
		return "", err
	}
	report.WriteString(renderFirst(answers(first[application]), answers(first[direct])))
	report.WriteString("\n" + renderStages(first[application], first[direct]))
	var changes map[variant][]change
	if cfg.changes > 0 {
		if changes, err = b.specChanges(ctx); err != nil {
			return report.String(), err
		}
		report.WriteString("\n" + renderChanges(changes[application], changes[direct]))
	}
	report.WriteString("\n" + renderProbes("apply → first answer", probes(first[application]),
		probes(first[direct])))
	if cfg.changes > 0 {
		report.WriteString(renderProbes("spec changes (their v2 Pods)", changeProbes(changes[application]),
			changeProbes(changes[direct])))
	}
	return report.String(), nil
}

// order is which variant goes first in pair i (from 1): the Application
// in odd pairs, the direct variant in even ones.
func order(i int) []variant {
	if i%2 == 1 {
		return []variant{application, direct}
	}
	return []variant{direct, application}
}

// firstAnswers runs the pairs of apply → first answer.
func (b *bench) firstAnswers(ctx context.Context) (map[variant][]firstRun, error) {
	if b.cfg.warmUp {
		for _, v := range order(1) {
			t, err := b.firstAnswer(ctx, v, v.prefix()+"-warm-up")
			if err != nil {
				return nil, fmt.Errorf("warm-up, %s: %w", v, err)
			}
			logf("warm-up %s: first answer after %s (not counted; %s)", v, secs(t.timing[stageAnswer]), t)
		}
	}
	runs := map[variant][]firstRun{}
	for i := 1; i <= b.cfg.n; i++ {
		for _, v := range order(i) {
			t, err := b.firstAnswer(ctx, v, runName(v, i))
			if err != nil {
				return nil, fmt.Errorf("pair %d, %s: %w", i, v, err)
			}
			runs[v] = append(runs[v], t)
			logf("pair %d/%d, %s: first answer after %s (%s)", i, b.cfg.n, v, secs(t.timing[stageAnswer]), t)
		}
	}
	return runs, nil
}

// specChanges runs the pairs of spec changes.
func (b *bench) specChanges(ctx context.Context) (map[variant][]change, error) {
	runs := map[variant][]change{}
	for i := 1; i <= b.cfg.changes; i++ {
		for _, v := range order(i) {
			c, err := b.specChange(ctx, v, changeName(v, i))
			if err != nil {
				return nil, fmt.Errorf("spec change %d, %s: %w", i, v, err)
			}
			runs[v] = append(runs[v], c)
			logf("spec change %d/%d, %s: every request v2 after %s, %d of %d requests failed%s",
				i, b.cfg.changes, v, secs(c.settled), c.failed, c.requests, failedMark(c.probeFailed))
		}
	}
	return runs, nil
}

// prepare checks the real node is Ready and makes the namespace afresh.
func (b *bench) prepare(ctx context.Context) error {
	node, err := b.cs.CoreV1().Nodes().Get(ctx, realNode, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("the cluster has no real node (hack/real-node.sh; make bench-real, as root): %w", err)
	}
	ready := false
	for _, c := range node.Status.Conditions {
		ready = ready || c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue
	}
	if !ready {
		return fmt.Errorf("node %s is not Ready", realNode)
	}
	ns := b.cfg.namespace
	if err := b.cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err == nil {
		logf("deleting namespace %s, left by an earlier run", ns)
	}
	if err := poll(ctx, 200*time.Millisecond, func() (bool, error) {
		_, err := b.cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err), ignoreNotFound(err)
	}); err != nil {
		return fmt.Errorf("namespace %s still there: %w", ns, err)
	}
	_, err = b.cs.CoreV1().Namespaces().Create(ctx,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	// kubectl's discovery cache, filled before the first timed apply.
	return b.kubectl(ctx, "get", "applications,deployments,services", "-n", ns)
}

func (b *bench) deleteNamespace() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = b.cs.CoreV1().Namespaces().Delete(ctx, b.cfg.namespace, metav1.DeleteOptions{})
}

// write writes the manifest of w as v into the work folder.
func (b *bench) write(v variant, w workload, suffix string) (string, error) {
	data, err := manifest(v, w)
	if err != nil {
		return "", err
	}
	file := filepath.Join(b.cfg.workDir, w.name+suffix+".yaml")
	return file, os.WriteFile(file, data, 0o644)
}

// kubectl runs the kubectl binary against the cluster.
func (b *bench) kubectl(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, b.cfg.kubectl, append([]string{"--kubeconfig", b.cfg.kubeconfig}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// startApply starts `kubectl apply -f file`: the context it returns ends,
// with kubectl's error as its cause, when kubectl fails; done is closed
// once kubectl has exited, its error then in *applyErr; cancel ends the
// context.
func (b *bench) startApply(ctx context.Context, file string) (runCtx context.Context, done <-chan struct{},
	applyErr *error, cancel func()) {
	runCtx, cancelCause := context.WithCancelCause(ctx)
	ch := make(chan struct{})
	var result error
	go func() {
		defer close(ch)
		if err := b.kubectl(runCtx, "apply", "-f", file); err != nil {
			result = err
			cancelCause(err)
		}
	}()
	return runCtx, ch, &result, func() { cancelCause(nil) }
}

// firstAnswer applies one Pod's worth of variant v named name and times,
// from starting kubectl apply, its stages up to the first HTTP 200
// through its Service; then it deletes it and waits until its Pods are
// gone.
func (b *bench) firstAnswer(ctx context.Context, v variant, name string) (firstRun, error) {
	w := workload{ns: b.cfg.namespace, name: name, image: imageV1, replicas: 1}
	file, err := b.write(v, w, "")
	if err != nil {
		return firstRun{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, runTimeout)
	defer cancel()
	watchCtx, stopWatches := context.WithCancel(ctx)
	defer stopWatches()
	c := &clock{}
	if err := watchStages(watchCtx, b.cs, b.cfg.namespace, name, c); err != nil {
		return firstRun{}, err
	}
	c.begin()
	runCtx, applied, applyErr, stop := b.startApply(ctx, file)
	err = b.awaitFirstAnswer(runCtx, name, c)
	<-applied
	stop()
	if err = errors.Join(*applyErr, err); err != nil {
		return firstRun{}, err
	}
	// The watches may deliver a stage a moment after the answer.
	time.Sleep(100 * time.Millisecond)
	stopWatches()
	r := firstRun{timing: c.timing()}
	if r.probeFailed, err = b.probeFailed(ctx, name, nil); err != nil {
		return r, err
	}
	return r, b.remove(ctx, file)
}

// awaitFirstAnswer polls the Service name for its ClusterIP, then
// requests it every probeEvery, each request from its own goroutine, until
// one answers 200, and marks both on c.
func (b *bench) awaitFirstAnswer(ctx context.Context, name string, c *clock) error {
	ip, err := b.clusterIP(ctx, name)
	if err != nil {
		return err
	}
	c.mark(stageService)
	url := fmt.Sprintf("http://%s:80/", ip)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	answered := make(chan struct{}, 1)
	tick := time.NewTicker(probeEvery)
	defer tick.Stop()
	for {
		go func() {
			if _, ok := b.get(ctx, url); ok {
				c.mark(stageAnswer)
				select {
				case answered <- struct{}{}:
				default:
				}
			}
		}()
		select {
		case <-answered:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("no answer from %s: %w", url, context.Cause(ctx))
		case <-tick.C:
		}
	}
}

// clusterIP polls the Service name every probeEvery until it has a
// ClusterIP.
func (b *bench) clusterIP(ctx context.Context, name string) (string, error) {
	var ip string
	err := poll(ctx, probeEvery, func() (bool, error) {
		svc, err := b.cs.CoreV1().Services(b.cfg.namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, ignoreNotFound(err)
		}
		ip = svc.Spec.ClusterIP
		return ip != "" && ip != corev1.ClusterIPNone, nil
	})
	if err != nil {
		return "", fmt.Errorf("service %s has no ClusterIP: %w", name, err)
	}
	return ip, nil
}

// get requests url once: the body, trimmed, and true for a 200.
func (b *bench) get(ctx context.Context, url string) (string, bool) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", false
	}
	resp, err := b.httpc.Do(req)
	if err != nil {
		return "", false
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return "", false
	}
	return strings.TrimSpace(string(body)), true
}

// specChange makes variant v named name with 2 replicas of v1, waits until
// it is rolled out and answers v1, then applies v2 and measures until
// every request answers v2; then it deletes it.
func (b *bench) specChange(ctx context.Context, v variant, name string) (change, error) {
	w := workload{ns: b.cfg.namespace, name: name, image: imageV1, replicas: 2, rolling: true}
	fileV1, err := b.write(v, w, "-v1")
	if err != nil {
		return change{}, err
	}
	w.image = imageV2
	fileV2, err := b.write(v, w, "-v2")
	if err != nil {
		return change{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, runTimeout)
	defer cancel()
	if err := b.kubectl(ctx, "apply", "-f", fileV1); err != nil {
		return change{}, err
	}
	if err := b.rolledOut(ctx, name, imageV1, 2); err != nil {
		return change{}, err
	}
	ip, err := b.clusterIP(ctx, name)
	if err != nil {
		return change{}, err
	}
	url := fmt.Sprintf("http://%s:80/", ip)
	// Every request answers v1 before the change.
	if _, err := b.client(ctx, url, time.Now(), "v1"); err != nil {
		return change{}, fmt.Errorf("before the change: %w", err)
	}
	pods, err := b.cs.CoreV1().Pods(b.cfg.namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return change{}, err
	}
	var v1Pods []string
	for _, p := range pods.Items {
		v1Pods = append(v1Pods, p.Name)
	}
	start := time.Now()
	runCtx, applied, applyErr, stop := b.startApply(ctx, fileV2)
	got, err := b.client(runCtx, url, start, "v2")
	<-applied
	stop()
	if err = errors.Join(*applyErr, err); err != nil {
		return change{}, err
	}
	at, _ := settled(got, "v2")
	c := change{settled: at, requests: len(got), failed: failures(got)}
	if c.probeFailed, err = b.probeFailed(ctx, name, v1Pods); err != nil {
		return c, err
	}
	return c, b.remove(ctx, fileV2)
}

// client requests url every probeEvery, one request after the other,
// until the last settleStreak answers are all want; it returns every
// answer, timed from start.
func (b *bench) client(ctx context.Context, url string, start time.Time, want string) ([]answer, error) {
	var seen []answer
	tick := time.NewTicker(probeEvery)
	defer tick.Stop()
	for {
		body, _ := b.get(ctx, url)
		if ctx.Err() != nil {
			return seen, fmt.Errorf("requesting %s: %w", url, context.Cause(ctx))
		}
		seen = append(seen, answer{at: time.Since(start), body: body})
		if _, ok := settled(seen, want); ok {
			return seen, nil
		}
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
}

// rolledOut waits until the Deployment name (the Application's child is
// named after it) has exactly replicas Pods, all of image, updated and
// available.
func (b *bench) rolledOut(ctx context.Context, name, image string, replicas int32) error {
	var d *appsv1.Deployment
	err := poll(ctx, 200*time.Millisecond, func() (bool, error) {
		var err error
		d, err = b.cs.AppsV1().Deployments(b.cfg.namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, ignoreNotFound(err)
		}
		s := d.Status
		return d.Spec.Template.Spec.Containers[0].Image == image && s.ObservedGeneration >= d.Generation &&
			s.Replicas == replicas && s.UpdatedReplicas == replicas && s.AvailableReplicas == replicas, nil
	})
	if err != nil {
		return fmt.Errorf("deployment %s not rolled out: %w", name, err)
	}
	return nil
}

// remove deletes what file made, as a user would (kubectl delete), then
// waits until the namespace holds no Deployment, Service or Pod, so that
// no run overlaps the next.
func (b *bench) remove(ctx context.Context, file string) error {
	if err := b.kubectl(ctx, "delete", "-f", file, "--wait=true"); err != nil {
		return err
	}
	ns := b.cfg.namespace
	err := poll(ctx, 200*time.Millisecond, func() (bool, error) {
		pods, err := b.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil || len(pods.Items) > 0 {
			return false, err
		}
		deploys, err := b.cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		if err != nil || len(deploys.Items) > 0 {
			return false, err
		}
		svcs, err := b.cs.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
		return err == nil && len(svcs.Items) == 0, err
	})
	if err != nil {
		return fmt.Errorf("%s: its objects not gone: %w", filepath.Base(file), err)
	}
	return nil
}

// poll calls cond every interval until it is done, fails, or runTimeout
// or ctx ends.
func poll(ctx context.Context, interval time.Duration, cond func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, runTimeout)
	defer cancel()
	for {
		done, err := cond()
		if err != nil || done {
			return err
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(interval):
		}
	}
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
