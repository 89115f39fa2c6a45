package testutil

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	controllers "sunstrider.cn/operator/internal/controller"
)

// conditionTrue is a condition's status True, as unstructured holds it.
const conditionTrue = string(metav1.ConditionTrue)

// StatusInvariants returns, for a person, every way the status of obj (any
// kind, as unstructured) breaks the conventions the operator follows
// (Flux's, read by kstatus); none means it keeps them all:
//   - Reconciling and Stalled exist only while True, never both;
//   - while Ready is True neither exists; while Ready is not True exactly
//     one does, with Ready's reason and message;
//   - status.observedGeneration is at most metadata.generation, and Ready,
//     Reconciling and Stalled carry it: a status is written for the
//     generation whose outcome it reports, all of it at once.
func StatusInvariants(obj *unstructured.Unstructured) []string {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	byType := map[string]map[string]any{}
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok {
			t, _ := m["type"].(string)
			byType[t] = m
		}
	}
	var broken []string
	ready := byType[controllers.ConditionReady]
	progress := 0
	for _, t := range []string{controllers.ConditionReconciling, controllers.ConditionStalled} {
		c := byType[t]
		if c == nil {
			continue
		}
		progress++
		if c["status"] != conditionTrue {
			broken = append(broken, fmt.Sprintf("%s is %v: it must be removed, not set other than True", t, c["status"]))
		}
		if ready == nil {
			broken = append(broken, fmt.Sprintf("%s without Ready", t))
			continue
		}
		if ready["status"] == conditionTrue {
			broken = append(broken, fmt.Sprintf("%s while Ready is True", t))
		}
		if c["reason"] != ready["reason"] || c["message"] != ready["message"] {
			broken = append(broken, fmt.Sprintf("%s (%v: %v) does not copy Ready (%v: %v)", t, c["reason"], c["message"],
				ready["reason"], ready["message"]))
		}
	}
	if progress > 1 {
		broken = append(broken, "Reconciling and Stalled both exist")
	}
	if ready != nil && ready["status"] != conditionTrue && progress == 0 {
		broken = append(broken, fmt.Sprintf("Ready is %v (%v) with neither Reconciling nor Stalled", ready["status"], ready["reason"]))
	}
	observed, hasObserved, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	if hasObserved && observed > obj.GetGeneration() {
		broken = append(broken, fmt.Sprintf("status.observedGeneration %d is ahead of generation %d", observed, obj.GetGeneration()))
	}
	for _, t := range []string{controllers.ConditionReady, controllers.ConditionReconciling, controllers.ConditionStalled} {
		c := byType[t]
		if c == nil || !hasObserved {
			continue
		}
		if g, _, _ := unstructured.NestedInt64(c, "observedGeneration"); g != observed {
			broken = append(broken, fmt.Sprintf("%s is for generation %d, status.observedGeneration is %d", t, g, observed))
		}
	}
	return broken
}

// InvariantChecker watches every object of some kinds and runs
// StatusInvariants on each version of it the API server sends: every
// status a suite's tests and controllers wrote, not just those a test
// looked at.
type InvariantChecker struct {
	mu     sync.Mutex
	broken []string
	seen   int
	stop   context.CancelFunc
}

// StartInvariantChecker starts checking the objects of the kinds of objs
// (typed objects of scheme) through cfg.
func StartInvariantChecker(cfg *rest.Config, scheme *runtime.Scheme, objs ...client.Object) (*InvariantChecker, error) {
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	c, err := cache.New(cfg, cache.Options{Scheme: scheme, Mapper: mapper, HTTPClient: httpClient})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	ic := &InvariantChecker{stop: cancel}
	for _, obj := range objs {
		gvk, err := apiutil.GVKForObject(obj, scheme)
		if err != nil {
			cancel()
			return nil, err
		}
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		inf, err := c.GetInformer(ctx, u)
		if err != nil {
			cancel()
			return nil, err
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { ic.check(o) },
			UpdateFunc: func(_, o any) { ic.check(o) },
		}); err != nil {
			cancel()
			return nil, err
		}
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		cancel()
		return nil, fmt.Errorf("the invariant checker's cache did not sync")
	}
	return ic, nil
}

func (ic *InvariantChecker) check(o any) {
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return
	}
	broken := StatusInvariants(u)
	ic.mu.Lock()
	defer ic.mu.Unlock()
	if _, has, _ := unstructured.NestedSlice(u.Object, "status", "conditions"); has {
		ic.seen++
	}
	for _, b := range broken {
		ic.broken = append(ic.broken, fmt.Sprintf("%s %s/%s generation %d resourceVersion %s: %s",
			u.GetKind(), u.GetNamespace(), u.GetName(), u.GetGeneration(), u.GetResourceVersion(), b))
	}
}

// Stop stops the checker and returns what it found: how many statuses
// with conditions it saw, and every broken invariant.
func (ic *InvariantChecker) Stop() (seen int, broken []string) {
	ic.stop()
	ic.mu.Lock()
	defer ic.mu.Unlock()
	return ic.seen, slices.Clone(ic.broken)
}

// Report is Stop's verdict as a suite prints it: "" when every status kept
// the invariants.
func (ic *InvariantChecker) Report() string {
	seen, broken := ic.Stop()
	if len(broken) == 0 {
		return ""
	}
	return fmt.Sprintf("%d of the statuses seen (%d in all) break the status invariants:\n  %s",
		len(broken), seen, strings.Join(broken, "\n  "))
}
