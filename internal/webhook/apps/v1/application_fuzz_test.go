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

package v1

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	"sunstrider.cn/operator/internal/apply"
	appscontroller "sunstrider.cn/operator/internal/controller/apps"
)

// appInput is what FuzzApplication builds an Application from: the fields
// the rules look at, each free.
type appInput struct {
	name                string
	selKey, selVal      string
	exprOp              string // a matchExpression on selKey when set
	tmplKey, tmplVal    string
	replicas            int32
	c1Name, c1Image     string
	c2Name              string // a second container, same image, when set
	svcType             string
	p1Name              string
	p1Port              int32
	p1Target, p1Proto   string
	p1NodePort          int32
	p2Name              string // a second port when set
	p2Port              int32
	oldSelVal           string // the stored selector's value on update, none when empty
	replicasUnsetInSpec bool
}

func (in appInput) build() (app, old *sunappsv1.Application) {
	app = &sunappsv1.Application{ObjectMeta: metav1.ObjectMeta{Name: in.name, Namespace: "ns"}}
	d := &app.Spec.Deployment
	if !in.replicasUnsetInSpec {
		d.Replicas = &in.replicas
	}
	if in.selKey != "" {
		d.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{in.selKey: in.selVal}}
		if in.exprOp != "" {
			d.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{
				Key: in.selKey, Operator: metav1.LabelSelectorOperator(in.exprOp), Values: []string{in.selVal},
			}}
		}
	}
	if in.tmplKey != "" {
		d.Template.Labels = map[string]string{in.tmplKey: in.tmplVal}
	}
	if in.c1Name != "" || in.c1Image != "" {
		d.Template.Spec.Containers = append(d.Template.Spec.Containers, corev1.Container{Name: in.c1Name, Image: in.c1Image})
	}
	if in.c2Name != "" {
		d.Template.Spec.Containers = append(d.Template.Spec.Containers, corev1.Container{Name: in.c2Name, Image: in.c1Image})
	}
	svc := &app.Spec.Service.ServiceSpec
	svc.Type = corev1.ServiceType(in.svcType)
	if in.p1Port != 0 || in.p1Name != "" {
		p := corev1.ServicePort{Name: in.p1Name, Port: in.p1Port, Protocol: corev1.Protocol(in.p1Proto), NodePort: in.p1NodePort}
		if n, err := strconv.ParseInt(in.p1Target, 10, 32); err == nil {
			p.TargetPort = intstr.FromInt32(int32(n))
		} else if in.p1Target != "" {
			p.TargetPort = intstr.FromString(in.p1Target)
		}
		svc.Ports = append(svc.Ports, p)
	}
	if in.p2Name != "" {
		svc.Ports = append(svc.Ports, corev1.ServicePort{Name: in.p2Name, Port: in.p2Port})
	}
	if in.oldSelVal != "" {
		old = app.DeepCopy()
		old.Spec.Deployment.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{in.selKey + "x": in.oldSelVal}}
	}
	return app, old
}

// FuzzApplication checks the Application defaulter and validator against
// arbitrary specs: no panic, validation deterministic and read-only, an
// unchanged spec always passes an update, defaulting idempotent and doing
// what it promises, skipped (matchConditions) only when it would change
// nothing, and the webhook's verdict on the defaulted Application
// the API server's (checkApplicationAgainstAPIServer). Plain `go test`
// runs the seeds; `make fuzz` explores.
func FuzzApplication(f *testing.F) {
	seeds := []appInput{
		// config/samples/apps_v1_application.yaml
		{name: "nginx-sample", selKey: "app", selVal: "nginx", tmplKey: "app", tmplVal: "nginx", replicas: 1,
			c1Name: "nginx", c1Image: "nginx:1.14.2", svcType: "NodePort", p1Port: 80, p1Target: "80", p1NodePort: 30080},
		// selector and template labels left to the defaulter
		{name: "web", replicas: 3, c1Name: "web", c1Image: "nginx", p1Name: "http", p1Port: 80, p1Target: "http",
			p2Name: "https", p2Port: 443, replicasUnsetInSpec: true},
		// selector changed on update
		{name: "web", selKey: "app", selVal: "web", tmplKey: "app", tmplVal: "web", c1Name: "web", c1Image: "nginx",
			oldSelVal: "old"},
		// bad values everywhere
		{name: "Bad_Name", selKey: "-bad", selVal: "x/y", exprOp: "Near", tmplKey: "app", tmplVal: "other",
			replicas: -1, c1Name: "Web", c2Name: "Web", svcType: "ClusterIP", p1Name: "HTTP", p1Port: 70000,
			p1Target: "0", p1Proto: "ICMP", p1NodePort: 80, p2Name: "HTTP", p2Port: 70000},
		{name: "x", selKey: "app", exprOp: "In", c1Name: "c", c1Image: "i", svcType: "LoadBalancer",
			p1Port: 53, p1Proto: "UDP", p1NodePort: 40000, p1Target: "very-long-port-name", p2Name: "dns", p2Port: 53},
		{name: "", selKey: "apps.sunstrider.cn/application", selVal: "", exprOp: "Exists", tmplKey: "ü", tmplVal: "\x00",
			c1Image: "nginx", p1Name: "\u00e9t\u00e9", p1Port: -1, p1Target: "-5", oldSelVal: " "},
	}
	for _, s := range seeds {
		f.Add(s.name, s.selKey, s.selVal, s.exprOp, s.tmplKey, s.tmplVal, s.replicas, s.c1Name, s.c1Image, s.c2Name,
			s.svcType, s.p1Name, s.p1Port, s.p1Target, s.p1Proto, s.p1NodePort, s.p2Name, s.p2Port, s.oldSelVal,
			s.replicasUnsetInSpec)
	}
	f.Fuzz(func(t *testing.T, name, selKey, selVal, exprOp, tmplKey, tmplVal string, replicas int32,
		c1Name, c1Image, c2Name, svcType, p1Name string, p1Port int32, p1Target, p1Proto string, p1NodePort int32,
		p2Name string, p2Port int32, oldSelVal string, replicasUnset bool) {
		for _, s := range []string{name, selKey, selVal, exprOp, tmplKey, tmplVal, c1Name, c1Image, c2Name, svcType,
			p1Name, p1Target, p1Proto, p2Name, oldSelVal} {
			if !utf8.ValidString(s) {
				return // API strings are UTF-8: JSON cannot carry anything else.
			}
		}
		app, old := appInput{
			name: name, selKey: selKey, selVal: selVal, exprOp: exprOp, tmplKey: tmplKey, tmplVal: tmplVal,
			replicas: replicas, c1Name: c1Name, c1Image: c1Image, c2Name: c2Name, svcType: svcType, p1Name: p1Name,
			p1Port: p1Port, p1Target: p1Target, p1Proto: p1Proto, p1NodePort: p1NodePort, p2Name: p2Name,
			p2Port: p2Port, oldSelVal: oldSelVal, replicasUnsetInSpec: replicasUnset,
		}.build()
		checkApplicationValidation(t, app, old)
		checkApplicationAgainstAPIServer(t, app)
		checkApplicationDefaulting(t, app, nil)
		checkDefaultsCondition(t, app, nil)
		if old != nil {
			checkApplicationDefaulting(t, app, old)
			checkDefaultsCondition(t, app, old)
		}
	})
}

func checkApplicationValidation(t *testing.T, app, old *sunappsv1.Application) {
	t.Helper()
	before := app.DeepCopy()
	errs := validateApplication(app)
	if again := validateApplication(app); !sameErrors(errs, again) {
		t.Fatalf("validation is not deterministic:\n%v\n%v", errs, again)
	}
	if !equality.Semantic.DeepEqual(before, app) {
		t.Fatalf("validation changed its input:\n%s", diff.Diff(before, app))
	}
	if same := validateApplicationUpdate(app, app.DeepCopy()); len(same) > 0 {
		t.Fatalf("an update leaving the spec unchanged is rejected: %v", same)
	}
	if old == nil {
		return
	}
	upd := validateApplicationUpdate(old, app)
	if again := validateApplicationUpdate(old, app); !sameErrors(upd, again) {
		t.Fatalf("update validation is not deterministic:\n%v\n%v", upd, again)
	}
	// Every create rule applies to a changed spec too.
	if len(errs) > 0 && !equality.Semantic.DeepEqual(old.Spec, app.Spec) && len(upd) < len(errs) {
		t.Fatalf("update validation %v misses create errors %v", upd, errs)
	}
}

// checkApplicationAgainstAPIServer defaults app and validates it as
// admission does (the exported webhooks, on create), then asks the API
// server (envtest, no webhook installed) instead of the validator's rules:
// an accepted Application must be accepted by a dry-run create (CRD schema
// and CEL rules; metadata.name aside, which the API server checks before
// any validating webhook sees the object), and so must the Deployment and
// the Service the operator makes of it; a refused one must be refused with
// an Invalid error naming fields it holds.
func checkApplicationAgainstAPIServer(t *testing.T, app *sunappsv1.Application) {
	t.Helper()
	ctx := context.Background()
	defaulted := viaJSON(t, app)
	req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Create}}
	if err := (&ApplicationDefaulter{}).Default(admission.NewContextWithRequest(ctx, req), defaulted); err != nil {
		t.Fatalf("Default: %v", err)
	}
	if _, err := (&ApplicationValidator{}).ValidateCreate(ctx, defaulted); err != nil {
		expectFieldsIn(t, err, defaulted)
		return
	}
	if err := dryRunCreate(t, defaulted); err != nil {
		var status apierrors.APIStatus
		if !errors.As(err, &status) || status.Status().Details == nil {
			t.Fatalf("the API server refused with %v, naming nothing", err)
		}
		for _, c := range status.Status().Details.Causes {
			if !strings.HasPrefix(c.Field, "metadata.name") && !strings.Contains(c.Message, "metadata.name") {
				t.Fatalf("the validator accepts %s, the API server refuses it: %v\nspec: %+v", defaulted.Name, err, defaulted.Spec)
			}
		}
		return
	}
	deployment, service := applicationChildren(defaulted)
	if err := dryRunCreate(t, deployment); err != nil {
		t.Fatalf("the validator accepts Application %s, the API server refuses its Deployment: %v\nspec: %+v",
			defaulted.Name, err, deployment.Spec)
	}
	if service != nil {
		if err := dryRunCreate(t, service); err != nil {
			t.Fatalf("the validator accepts Application %s, the API server refuses its Service: %v\nspec: %+v",
				defaulted.Name, err, service.Spec)
		}
	}
}

// applicationChildren is the Deployment and the Service (nil without
// ports) the operator makes of a new, defaulted Application
// (internal/controller/apps: desiredDeployment, desiredService and
// applicationSelector, unexported there; owner references left out, as
// the Application is not stored).
func applicationChildren(app *sunappsv1.Application) (*appsv1.Deployment, *corev1.Service) {
	selector := app.Spec.Deployment.Selector
	if sunappsv1.IsEmptySelector(selector) {
		selector = &metav1.LabelSelector{MatchLabels: map[string]string{appscontroller.ApplicationLabel: app.Name}}
	}
	meta := metav1.ObjectMeta{Name: app.Name, Namespace: app.Namespace, Labels: map[string]string{
		apply.ManagedByLabel: apply.ManagedByValue, appscontroller.ApplicationLabel: app.Name,
	}}
	spec := app.Spec.Deployment.DeepCopy()
	template := spec.Template
	if template.Labels == nil {
		template.Labels = map[string]string{}
	}
	maps.Copy(template.Labels, selector.MatchLabels)
	deployment := &appsv1.Deployment{
		ObjectMeta: meta,
		Spec: appsv1.DeploymentSpec{
			Replicas: spec.Replicas, Selector: selector.DeepCopy(), Template: template, Strategy: spec.Strategy,
			MinReadySeconds: spec.MinReadySeconds, RevisionHistoryLimit: spec.RevisionHistoryLimit, Paused: spec.Paused,
			ProgressDeadlineSeconds: spec.ProgressDeadlineSeconds,
		},
	}
	if len(app.Spec.Service.Ports) == 0 {
		return deployment, nil
	}
	svc := app.Spec.Service.ServiceSpec.DeepCopy()
	if len(svc.Selector) == 0 {
		svc.Selector = maps.Clone(selector.MatchLabels)
	}
	for i := range svc.Ports {
		if svc.Ports[i].TargetPort == (intstr.IntOrString{}) {
			svc.Ports[i].TargetPort = intstr.FromInt32(svc.Ports[i].Port)
		}
	}
	return deployment, &corev1.Service{ObjectMeta: *meta.DeepCopy(), Spec: *svc}
}

// checkApplicationDefaulting defaults app (on create when old is nil, on
// update otherwise) twice, through the exported webhook, and checks the
// result.
func checkApplicationDefaulting(t *testing.T, app, old *sunappsv1.Application) {
	t.Helper()
	once := app.DeepCopy()
	defaultApplication(once, old)
	twice := once.DeepCopy()
	defaultApplication(twice, old)
	if !equality.Semantic.DeepEqual(once, twice) {
		t.Fatalf("defaulting is not idempotent (-once +twice):\n%s", diff.Diff(once, twice))
	}
	d := once.Spec.Deployment
	if d.Replicas == nil {
		t.Fatal("replicas not defaulted")
	}
	if d.Selector != nil {
		for k, v := range d.Selector.MatchLabels {
			if _, ok := d.Template.Labels[k]; !ok {
				t.Fatalf("selector label %s=%s missing from the defaulted template labels %v", k, v, d.Template.Labels)
			}
		}
	}
	for i, p := range once.Spec.Service.Ports {
		// (targetPort 0 reads as unset; port 0 is invalid anyway)
		if p.Protocol == "" || (p.Port != 0 && p.TargetPort == (intstr.IntOrString{})) {
			t.Fatalf("port %d not defaulted: %+v", i, p)
		}
	}
	if old == nil && app.Name != "" && sunappsv1.IsEmptySelector(app.Spec.Deployment.Selector) && d.Selector == nil {
		t.Fatal("a named Application got no selector on create")
	}

	// The exported webhook, as the API server calls it, does the same.
	req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Create}}
	if old != nil {
		raw, err := json.Marshal(old)
		if err != nil {
			t.Fatal(err)
		}
		req.Operation, req.OldObject = admissionv1.Update, runtime.RawExtension{Raw: raw}
	}
	viaWebhook := app.DeepCopy()
	if err := (&ApplicationDefaulter{}).Default(admission.NewContextWithRequest(context.Background(), req), viaWebhook); err != nil {
		t.Fatalf("Default: %v", err)
	}
	if !equality.Semantic.DeepEqual(once, viaWebhook) {
		t.Fatalf("the webhook defaults differently (-rules +webhook):\n%s", diff.Diff(once, viaWebhook))
	}
	// Defaulting and validating in turn, as admission does, never panics
	// and stays deterministic.
	if a, b := validateApplication(once), validateApplication(once); !sameErrors(a, b) {
		t.Fatalf("validation of the defaulted object is not deterministic:\n%v\n%v", a, b)
	}
}

// sameErrors tells whether a and b hold the same errors. Their order may
// differ: the upstream label validation walks a map, so two invalid labels
// are reported in either order.
func sameErrors(a, b field.ErrorList) bool {
	return slices.Equal(sortedErrors(a), sortedErrors(b))
}

func sortedErrors(errs field.ErrorList) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, e.Error())
	}
	slices.Sort(out)
	return out
}
