package main

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
)

// weightCopies is how many decoded copies of each object weighObjects keeps
// alive to measure one: enough for the heap delta to dwarf the noise.
const weightCopies = 2000

// objectWeight is what one object of a kind costs in the operator's cache.
type objectWeight struct {
	kind      string
	jsonBytes int
	heapBytes float64
}

// weighObjects reads one converged Application of ns and its children as
// the API server serves them, strips them as the operator's cache does
// (managedFields everywhere), and measures the live heap each one takes
// once decoded into its Go type: the part of the operator's heap per
// Application that is the cached objects themselves, before informer
// indexes and queues. Its Pod is not among them: the operator watches Pods
// only once a MyCustomResource or a Guestbook needs them
// (machinery.LazyWatch).
func weighObjects(ctx context.Context, c client.Client, ns, name string) ([]objectWeight, error) {
	app := &sunappsv1.Application{}
	dep := &appsv1.Deployment{}
	svc := &corev1.Service{}
	for _, obj := range []client.Object{app, dep, svc} {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
			return nil, fmt.Errorf("reading %T %s/%s: %w", obj, ns, name, err)
		}
		obj.SetManagedFields(nil)
	}
	return []objectWeight{
		weigh[sunappsv1.Application]("Application", app),
		weigh[appsv1.Deployment]("Deployment", dep),
		weigh[corev1.Service]("Service", svc),
	}, nil
}

// weigh decodes weightCopies copies of obj's JSON into new T values and
// returns the live heap they add, per copy.
func weigh[T any](kind string, obj any) objectWeight {
	data, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	keep := make([]*T, weightCopies)
	before := liveHeap()
	for i := range keep {
		keep[i] = new(T)
		if err := json.Unmarshal(data, keep[i]); err != nil {
			panic(err)
		}
	}
	after := liveHeap()
	runtime.KeepAlive(keep)
	return objectWeight{kind: kind, jsonBytes: len(data), heapBytes: float64(after-before) / weightCopies}
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// totalHeap is the decoded heap of all the weighed objects together.
func totalHeap(w []objectWeight) float64 {
	var total float64
	for _, o := range w {
		total += o.heapBytes
	}
	return total
}

func renderWeights(w []objectWeight) string {
	var sb strings.Builder
	sb.WriteString("| cached object | JSON | decoded Go heap |\n|---|---:|---:|\n")
	for _, o := range w {
		fmt.Fprintf(&sb, "| %s | %d B | %.2f KiB |\n", o.kind, o.jsonBytes, o.heapBytes/1024)
	}
	fmt.Fprintf(&sb, "| sum | | %.2f KiB |", totalHeap(w)/1024)
	return sb.String()
}
