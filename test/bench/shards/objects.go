package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	"sunstrider.cn/operator/internal/apply"
)

// benchLabel marks every object this command creates.
const benchLabel = "sunstrider.cn/bench"

const benchValue = "shards"

// nameAlphabet is the alphabet of the API server's generateName suffixes.
const nameAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// namespaceName is the i-th namespace: shards- and 5 characters as
// generateName would pick them, but derived from i, so that reruns find
// the same namespaces. Names that differ only in their last characters
// (shards-000, shards-001, ...) would not do: their FNV-1a hashes differ
// only in middle bits, so they all fall into one range (see balance).
func namespaceName(i int) string {
	sum := sha256.Sum256([]byte(strconv.Itoa(i)))
	suffix := make([]byte, 5)
	for j := range suffix {
		suffix[j] = nameAlphabet[int(sum[j])%len(nameAlphabet)]
	}
	return "shards-" + string(suffix)
}

func itemName(i int) string { return fmt.Sprintf("app-%05d", i) }

// podSelector selects the Pods of the Application name (it has none: 0
// replicas), as test/bench's objects do.
func podSelector(name string) map[string]string { return map[string]string{"app": name} }

func appLabels(name string) map[string]string {
	l := podSelector(name)
	l[benchLabel] = benchValue
	return l
}

// childLabels are the Application's labels and the operator's managed-by
// label, which the operator's cache selects its Deployments and Services by.
func childLabels(name string) map[string]string {
	l := appLabels(name)
	l[apply.ManagedByLabel] = apply.ManagedByValue
	return l
}

func podTemplate(name string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: podSelector(name)},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "nginx", Image: "nginx:1.14.2",
			Ports: []corev1.ContainerPort{{ContainerPort: 80}},
		}}},
	}
}

func servicePorts() []corev1.ServicePort {
	return []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(80)}}
}

// newApplication is test/bench's Application with 0 replicas, so that the
// cluster runs no Pod for it.
func newApplication(ns, name string) *sunappsv1.Application {
	var zero int32
	selector := podSelector(name)
	return &sunappsv1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: appLabels(name)},
		Spec: sunappsv1.ApplicationSpec{
			Deployment: sunappsv1.DeploymentTemplate{
				Replicas: &zero,
				Selector: &metav1.LabelSelector{MatchLabels: selector},
				Template: podTemplate(name),
			},
			Service: sunappsv1.ServiceTemplate{ServiceSpec: corev1.ServiceSpec{
				Type: corev1.ServiceTypeClusterIP, Ports: servicePorts(),
			}},
		},
	}
}

// children are the Application's Deployment (0 replicas) and ClusterIP
// Service, each with a controller reference to it, as test/bench's floor
// makes them, plus the managed-by label.
func children(app *sunappsv1.Application) []client.Object {
	var zero int32
	owner := *metav1.NewControllerRef(app, sunappsv1.GroupVersion.WithKind("Application"))
	meta := func() metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: app.Namespace, Name: app.Name, Labels: childLabels(app.Name),
			OwnerReferences: []metav1.OwnerReference{owner}}
	}
	selector := podSelector(app.Name)
	return []client.Object{
		&appsv1.Deployment{
			ObjectMeta: meta(),
			Spec: appsv1.DeploymentSpec{
				Replicas: &zero,
				Selector: &metav1.LabelSelector{MatchLabels: selector},
				Template: podTemplate(app.Name),
			},
		},
		&corev1.Service{
			ObjectMeta: meta(),
			Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: servicePorts(), Selector: selector},
		},
	}
}

// installCRD applies the Application CRD and waits until it is Established.
func installCRD(ctx context.Context, c client.Client, kubectl, kubeconfig string) error {
	const file = "config/crd/bases/apps.sunstrider.cn_applications.yaml"
	crd, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("reading the Application CRD (run from the repository root): %w", err)
	}
	cmd := exec.CommandContext(ctx, kubectl, "--kubeconfig", kubeconfig,
		"apply", "--server-side", "--force-conflicts", "--field-manager=bench-shards", "-f", "-")
	cmd.Stdin = bytes.NewReader(crd)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("applying %s: %w\n%s", file, err, out)
	}
	established := func(ctx context.Context) (bool, error) {
		got := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: "applications.apps.sunstrider.cn"}, got); err != nil {
			return false, err
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	}
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, established)
}

// ensureObjects makes n Applications, spread round-robin over namespaces,
// each with its Deployment and Service. What exists already is kept, so a
// rerun creates only what is missing.
func ensureObjects(ctx context.Context, c client.Client, n, namespaces, workers int) error {
	for i := range namespaces {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespaceName(i),
			Labels: map[string]string{benchLabel: benchValue}}}
		if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	sel := client.MatchingLabels{benchLabel: benchValue}
	apps := map[types.NamespacedName]*sunappsv1.Application{}
	appList := &sunappsv1.ApplicationList{}
	if err := c.List(ctx, appList, sel); err != nil {
		return err
	}
	for i := range appList.Items {
		a := &appList.Items[i]
		apps[client.ObjectKeyFromObject(a)] = a
	}
	have := map[string]bool{} // "Kind ns/name" of the children that exist
	deps := &appsv1.DeploymentList{}
	if err := c.List(ctx, deps, sel); err != nil {
		return err
	}
	for _, d := range deps.Items {
		have[kindDeployment+" "+d.Namespace+"/"+d.Name] = true
	}
	svcs := &corev1.ServiceList{}
	if err := c.List(ctx, svcs, sel); err != nil {
		return err
	}
	for _, s := range svcs.Items {
		have[kindService+" "+s.Namespace+"/"+s.Name] = true
	}
	logf("Found %d Applications, %d Deployments, %d Services of an earlier run",
		len(apps), len(deps.Items), len(svcs.Items))

	var created atomic.Int64
	work := make(chan int)
	errs := make(chan error, workers)
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range work {
				if err := ensureItem(wctx, c, i, namespaces, apps, have, &created); err != nil {
					errs <- fmt.Errorf("item %d: %w", i, err)
					stop()
					return
				}
			}
		})
	}
	start := time.Now()
	go func() { // progress, until the workers are done
		tick := time.NewTicker(15 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-wctx.Done():
				return
			case <-tick.C:
				logf("  %d objects created so far (%s)", created.Load(), time.Since(start).Round(time.Second))
			}
		}
	}()
feed:
	for i := range n {
		select {
		case work <- i:
		case <-wctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	stop()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	logf("Created %d objects in %s", created.Load(), time.Since(start).Round(time.Millisecond))
	return nil
}

// ensureItem creates item i's Application and children unless they exist.
// apps and have are only read here.
func ensureItem(ctx context.Context, c client.Client, i, namespaces int,
	apps map[types.NamespacedName]*sunappsv1.Application, have map[string]bool, created *atomic.Int64) error {
	ns, name := namespaceName(i%namespaces), itemName(i)
	app, ok := apps[types.NamespacedName{Namespace: ns, Name: name}]
	if !ok {
		app = newApplication(ns, name)
		if err := c.Create(ctx, app); err != nil {
			return err
		}
		created.Add(1)
	}
	for _, child := range children(app) {
		kind := kindDeployment
		if _, ok := child.(*corev1.Service); ok {
			kind = kindService
		}
		if have[kind+" "+ns+"/"+name] {
			continue
		}
		// Written as the operator writes its children, so that the cache
		// transform drops their managedFields as it does in the operator.
		if err := c.Create(ctx, child, client.FieldOwner(apply.FieldOwner)); err != nil {
			return err
		}
		created.Add(1)
	}
	return nil
}
