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
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"sunstrider.cn/operator/internal/apply"
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

// OperatorManagers are the field managers of the operator's writes in a
// Suite: its manager's user agent (SuiteManagerAgent), which the API
// server names the manager of a write that names none, as the operator's
// status writes do, and the operator's own server-side apply field owner.
var OperatorManagers = []string{SuiteManagerAgent, apply.FieldOwner}

// InvariantChecker watches every object of some kinds and runs
// StatusInvariants on each version of it the API server sends: every
// status a suite's tests and controllers wrote, not just those a test
// looked at. A checker that saw nothing would prove nothing: it also
// fails a kind of which it saw no status the operator wrote with
// status.observedGeneration (its managedFields say the operator
// (OperatorManagers) owns status.observedGeneration).
type InvariantChecker struct {
	mu     sync.Mutex
	broken []string
	seen   int
	// kinds are the kinds watched, in the order given; operatorWritten
	// counts, per kind, the versions seen whose status.observedGeneration
	// the operator wrote.
	kinds           []schema.GroupVersionKind
	operatorWritten map[schema.GroupKind]int
	stop            context.CancelFunc
}

// newInvariantChecker returns a checker of kinds that has seen nothing.
func newInvariantChecker(kinds []schema.GroupVersionKind, stop context.CancelFunc) *InvariantChecker {
	return &InvariantChecker{kinds: kinds, operatorWritten: map[schema.GroupKind]int{}, stop: stop}
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
	kinds := make([]schema.GroupVersionKind, 0, len(objs))
	for _, obj := range objs {
		gvk, err := apiutil.GVKForObject(obj, scheme)
		if err != nil {
			return nil, err
		}
		kinds = append(kinds, gvk)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ic := newInvariantChecker(kinds, cancel)
	for _, gvk := range kinds {
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
	byOperator := observedGenerationByOperator(u)
	ic.mu.Lock()
	defer ic.mu.Unlock()
	if _, has, _ := unstructured.NestedSlice(u.Object, "status", "conditions"); has {
		ic.seen++
	}
	if byOperator {
		ic.operatorWritten[u.GroupVersionKind().GroupKind()]++
	}
	for _, b := range broken {
		ic.broken = append(ic.broken, fmt.Sprintf("%s %s/%s generation %d resourceVersion %s: %s",
			u.GetKind(), u.GetNamespace(), u.GetName(), u.GetGeneration(), u.GetResourceVersion(), b))
	}
}

// observedGenerationByOperator tells whether u has a
// status.observedGeneration that the operator wrote: a status-subresource
// entry of one of OperatorManagers in its managedFields owns it.
func observedGenerationByOperator(u *unstructured.Unstructured) bool {
	if _, has, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration"); !has {
		return false
	}
	entries, _, _ := unstructured.NestedSlice(u.Object, "metadata", "managedFields")
	for _, e := range entries {
		entry, ok := e.(map[string]any)
		if !ok || entry["subresource"] != "status" || !slices.Contains(OperatorManagers, fmt.Sprint(entry["manager"])) {
			continue
		}
		if _, owns, _ := unstructured.NestedFieldNoCopy(entry, "fieldsV1", "f:status", "f:observedGeneration"); owns {
			return true
		}
	}
	return false
}

// Stop stops the checker and returns what it found: how many statuses
// with conditions it saw, and every broken invariant.
func (ic *InvariantChecker) Stop() (seen int, broken []string) {
	ic.stop()
	ic.mu.Lock()
	defer ic.mu.Unlock()
	return ic.seen, slices.Clone(ic.broken)
}

// Unchecked returns, for each kind watched of which the checker saw no
// status.observedGeneration the operator wrote, why that fails: none of
// the kind's statuses was checked.
func (ic *InvariantChecker) Unchecked() []string {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	var unchecked []string
	for _, gvk := range ic.kinds {
		if ic.operatorWritten[gvk.GroupKind()] == 0 {
			unchecked = append(unchecked, fmt.Sprintf("%s: no status written by the operator (%s) with status.observedGeneration "+
				"was seen, so none of its statuses was checked", gvk.Kind, strings.Join(OperatorManagers, " or ")))
		}
	}
	return unchecked
}

// Report stops the checker and returns its verdict as a suite prints it:
// "" when every status kept the invariants and, when whole, every kind had
// statuses the operator wrote. whole tells whether the run was the
// suite's whole (neither -run nor -skip): some of its tests alone may
// leave a kind without any object, which proves no checker wrong.
func (ic *InvariantChecker) Report(whole bool) string {
	seen, broken := ic.Stop()
	if whole {
		broken = append(broken, ic.Unchecked()...)
	}
	if len(broken) == 0 {
		return ""
	}
	return fmt.Sprintf("the status invariants checker (%d statuses with conditions seen) found:\n  %s",
		seen, strings.Join(broken, "\n  "))
}
