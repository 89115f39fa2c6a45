/*
Copyright 2026.

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

package controller

import (
	"context"
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	configv1alpha1 "sunstrider.cn/operator/api/config/v1alpha1"
)

// The driver's hooks run when its doc says: Current only once the status
// stored is this reconcile's (written, or already so; never after a write
// found stale), Wrote only after a write, and a replica that does not lead
// writes nothing but is current.
func TestDriverRunsTheStatusHooksWhenTheStatusIsCurrent(t *testing.T) {
	tests := []struct {
		name string
		// patchErr is the API server's answer to the status patch.
		patchErr error
		// same: the status computed is the one stored (no write).
		same     bool
		notLeads bool
		wrote    bool
		current  bool
		wantErr  bool
	}{
		{name: "written", wrote: true, current: true},
		{name: "already so", same: true, current: true},
		{name: "stale", patchErr: apierrors.NewConflict(schema.GroupResource{Resource: "operatorconfigurations"}, "default",
			errors.New("the object has been modified"))},
		{name: "unreachable", patchErr: apierrors.NewServiceUnavailable("down"), wantErr: true},
		{name: "not leading", notLeads: true, current: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			scheme := runtime.NewScheme()
			g.Expect(configv1alpha1.AddToScheme(scheme)).To(Succeed())
			stored := &configv1alpha1.OperatorConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "default", Generation: 1}}
			stored.Status.ObservedGeneration = 1
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(stored).WithStatusSubresource(stored).
				WithInterceptorFuncs(interceptor.Funcs{
					SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object,
						p client.Patch, o ...client.SubResourcePatchOption) error {
						if tt.patchErr != nil {
							return tt.patchErr
						}
						return c.SubResource(sub).Patch(ctx, obj, p, o...)
					},
				}).Build()
			var wrote, current int
			k := &Kind[*configv1alpha1.OperatorConfiguration, struct{}]{
				Name: "OperatorConfiguration", Client: c, Recorder: events.NewFakeRecorder(10), Written: &WrittenObjects{},
				New:   func() *configv1alpha1.OperatorConfiguration { return &configv1alpha1.OperatorConfiguration{} },
				Begin: func(context.Context, *configv1alpha1.OperatorConfiguration, *Children) struct{} { return struct{}{} },
				ComputeStatus: func(cfg *configv1alpha1.OperatorConfiguration, _ struct{}) {
					if !tt.same {
						cfg.Status.ObservedGeneration = 2
					}
				},
				Wrote: func(context.Context, *configv1alpha1.OperatorConfiguration, *configv1alpha1.OperatorConfiguration, struct{}) {
					wrote++
				},
				Current: func(context.Context, *configv1alpha1.OperatorConfiguration, struct{}) { current++ },
				Leading: func() bool { return !tt.notLeads },
			}
			result, err := Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(stored)}, k)
			g.Expect(err != nil).To(Equal(tt.wantErr), "%v", err)
			g.Expect(wrote).To(Equal(map[bool]int{true: 1}[tt.wrote]))
			g.Expect(current).To(Equal(map[bool]int{true: 1}[tt.current]))
			if apierrors.IsConflict(tt.patchErr) {
				g.Expect(result.RequeueAfter).To(Equal(StaleRetry), "a stale write reconciles again")
			}
		})
	}
}
