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

package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// foreignNamespace holds the ConfigMaps of -foreign-configmaps.
const foreignNamespace = "bench-foreign-configmaps"

// createForeignConfigMaps creates n ConfigMaps of size bytes of data each,
// none of them the operator's (no managed-by label), in foreignNamespace:
// the weight a cluster's other ConfigMaps put on the operator's cache.
// Existing ones (a previous run) are kept.
func createForeignConfigMaps(ctx context.Context, c client.Client, n, size int) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: foreignNamespace}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	start := time.Now()
	value := strings.Repeat("x", size)
	idx := make(chan int)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range createWorkers {
		wg.Go(func() {
			for i := range idx {
				cm := &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Namespace: foreignNamespace, Name: fmt.Sprintf("foreign-%05d", i)},
					Data:       map[string]string{"data": value},
				}
				if err := c.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
					errs <- fmt.Errorf("creating ConfigMap %s: %w", cm.Name, err)
				}
			}
		})
	}
	for i := range n {
		idx <- i
	}
	close(idx)
	wg.Wait()
	close(errs)
	for err := range errs {
		return err
	}
	logf("bench: %d foreign ConfigMaps of %d KiB in %s, made in %s", n, size>>10, foreignNamespace,
		time.Since(start).Round(time.Millisecond))
	return nil
}

// deleteForeignConfigMaps deletes foreignNamespace and waits until it is
// gone.
func deleteForeignConfigMaps(ctx context.Context, c client.Client) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: foreignNamespace}}
	if err := c.Delete(ctx, ns); err != nil {
		return client.IgnoreNotFound(err)
	}
	return wait.PollUntilContextTimeout(ctx, time.Second, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(ns), ns)
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

// idleRSS is VmRSS from /proc/<pid>/status, in bytes: the resident memory
// now, where peakRSS is its highest.
func (p *proc) idleRSS() (float64, error) {
	return p.statusBytes("VmRSS:")
}

// statusBytes reads the field (e.g. "VmRSS:", in kB) of /proc/<pid>/status,
// in bytes.
func (p *proc) statusBytes(field string) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.pid()))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			var kb float64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%f kB", &kb); err != nil {
				return 0, fmt.Errorf("parsing %s %q: %w", field, rest, err)
			}
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, p.pid())
}
