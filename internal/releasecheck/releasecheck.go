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

// Package releasecheck proves, through the API server, that an installed
// operator's webhooks are served by a running manager whose certificate
// the API server trusts: `manager check-release`, the Helm chart's
// `helm test` hook.
//
// Each probe is a server-side dry-run create (dryRun=All: nothing is
// stored) of an object that breaks a rule only a webhook of the operator
// checks, no CRD schema or CEL rule, and passes when the API server
// answers with that webhook's refusal: its name, the field and the
// message. Any other answer fails at once (a request the API server
// accepted, another refusal, a forbidden request); an answer saying the
// API server could not call a webhook or convert (no ready endpoint, a
// certificate it does not trust, a timeout) is retried until the timeout,
// as the operator may still be starting or injecting its CA.
//
// The operator's validation comes before its access review (the author's
// rights on the children, spec.childAccess), so the answers do not depend
// on what the probing ServiceAccount may do besides Rules.
package releasecheck

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	examplev1alpha1 "sunstrider.cn/operator/api/example/v1alpha1"
	examplev1beta1 "sunstrider.cn/operator/api/example/v1beta1"
)

// ProbeName is the name of every probe object; none is ever stored.
const ProbeName = "sunstrider-release-check"

// Rules are the only rights the probes need, in the namespace they are
// made in: a dry-run create is authorized as a create. The chart's test
// hook Role grants exactly these.
var Rules = []rbacv1.PolicyRule{
	{APIGroups: []string{sunappsv1.GroupVersion.Group}, Resources: []string{"applications"}, Verbs: []string{"create"}},
	{APIGroups: []string{examplev1alpha1.GroupVersion.Group}, Resources: []string{"drinks"}, Verbs: []string{"create"}},
}

// Probe is one dry-run create and the refusal it must get.
type Probe struct {
	// Name says what the expected refusal proves.
	Name string
	// Object is created with dryRun=All.
	Object client.Object
	// Webhook names the validating webhook that must refuse Object.
	Webhook string
	// Field and Message are the cause that refusal must carry.
	Field, Message string
}

// Probes returns the probes, made in namespace.
//
//   - Application: no selector, and a Pod template label
//     apps.sunstrider.cn/application that is not the Application's name.
//     Only the mutating webhook (mapplication-v1) sets a selector, the
//     derived {apps.sunstrider.cn/application: <name>}, and only the
//     validating webhook (vapplication-v1) compares it with the template's
//     labels: the mismatch refusal proves both were called, in order,
//     with a trusted certificate. Without the mutating webhook the
//     Application would pass validation.
//   - Drink, written as v1alpha1 with a size annotation that is no size:
//     the Drink webhooks serve v1 only, so the API server converts the
//     object to v1 through the conversion webhook before the validating
//     webhook (vdrink-v1) refuses the size, which no CRD schema checks
//     (CEL cannot read annotations).
func Probes(namespace string) []Probe {
	return []Probe{{
		Name: "Application mutating and validating webhooks",
		Object: &sunappsv1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: ProbeName, Namespace: namespace},
			Spec: sunappsv1.ApplicationSpec{Deployment: sunappsv1.DeploymentTemplate{
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{
						"apps.sunstrider.cn/application": "not-" + ProbeName,
					}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "probe", Image: "probe"}}},
				},
			}},
		},
		Webhook: "vapplication-v1.sunstrider.cn",
		Field:   "spec.deployment.template.metadata.labels",
		Message: "`selector` does not match template `labels`",
	}, {
		Name: "Drink conversion and validating webhooks",
		Object: &examplev1alpha1.Drink{
			ObjectMeta: metav1.ObjectMeta{Name: ProbeName, Namespace: namespace,
				Annotations: map[string]string{examplev1beta1.SizeAnnotation: "Venti"}},
			Spec: examplev1alpha1.DrinkSpec{Order: "tea for " + ProbeName},
		},
		Webhook: "vdrink-v1.example.com",
		Field:   "metadata.annotations[" + examplev1beta1.SizeAnnotation + "]",
		Message: `Unsupported value: "Venti"`,
	}}
}

// verdict is what one answer to a probe means.
type verdict int

const (
	// passed: the expected webhook refused the probe as expected.
	passed verdict = iota
	// retry: the API server could not reach a webhook or the API server
	// itself was not reached; the operator may not be ready yet.
	retry
	// failed: any other answer.
	failed
)

func (v verdict) String() string {
	return [...]string{"passed", "retry", "failed"}[v]
}

// judge tells what err, the answer to p's dry-run create, means, and why
// it is not a pass.
func judge(p Probe, err error) (verdict, error) {
	want := fmt.Sprintf("the refusal of webhook %q: %s: %s", p.Webhook, p.Field, p.Message)
	if err == nil {
		return failed, fmt.Errorf("the API server accepted the dry-run create, want %s "+
			"(is the release's ValidatingWebhookConfiguration there?)", want)
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		// No answer from the API server: it may be reachable later.
		return retry, fmt.Errorf("no answer from the API server: %w", err)
	}
	switch {
	case apierrors.IsInvalid(err):
		if refusedBy(status.Status(), p) {
			return passed, nil
		}
	case apierrors.IsInternalError(err), apierrors.IsServiceUnavailable(err), apierrors.IsTimeout(err),
		apierrors.IsServerTimeout(err), apierrors.IsTooManyRequests(err):
		// "failed calling webhook", "conversion webhook ... failed": no
		// ready endpoint, an untrusted certificate, a slow answer.
		return retry, fmt.Errorf("want %s, got: %w", want, err)
	case apierrors.IsForbidden(err):
		return failed, fmt.Errorf("want %s, got: %w (the test ServiceAccount's Role must allow: %s)",
			want, err, RulesText())
	}
	return failed, fmt.Errorf("want %s, got: %w", want, err)
}

// refusedBy tells whether s is p.Webhook's refusal with p's cause.
func refusedBy(s metav1.Status, p Probe) bool {
	if !strings.Contains(s.Message, fmt.Sprintf("admission webhook %q denied the request", p.Webhook)) ||
		s.Details == nil {
		return false
	}
	for _, c := range s.Details.Causes {
		if c.Field == p.Field && strings.Contains(c.Message, p.Message) {
			return true
		}
	}
	return false
}

// RulesText is Rules in a line, e.g. for a usage message.
func RulesText() string {
	parts := make([]string, 0, len(Rules))
	for _, r := range Rules {
		parts = append(parts, fmt.Sprintf("%s %s.%s", strings.Join(r.Verbs, ","), strings.Join(r.Resources, ","),
			strings.Join(r.APIGroups, ",")))
	}
	return strings.Join(parts, "; ")
}

// Options of Run.
type Options struct {
	// Namespace the probes are made in.
	Namespace string
	// Timeout bounds the retries of every probe together.
	Timeout time.Duration
	// Interval between the attempts of a probe; 0 means a second.
	Interval time.Duration
}

// Run runs the probes with c, one after another, and returns nil when each
// got its expected refusal. It stops at the first probe that fails, or
// that still gets a retryable answer when the timeout ends, and says
// which probe and why. A request in flight is bounded by c's own timeout
// (rest.Config.Timeout), not by o.Timeout: the last answer is reported,
// never a request cut short.
func Run(ctx context.Context, c client.Client, o Options, log logr.Logger) error {
	if o.Namespace == "" {
		return errors.New("no namespace to make the probes in (--namespace, or env POD_NAMESPACE)")
	}
	interval := o.Interval
	if interval <= 0 {
		interval = time.Second
	}
	deadline := time.Now().Add(o.Timeout)
	for _, p := range Probes(o.Namespace) {
		kind := fmt.Sprintf("%T", p.Object)
		kind = kind[strings.LastIndex(kind, ".")+1:]
		for attempt := 1; ; attempt++ {
			obj, ok := p.Object.DeepCopyObject().(client.Object)
			if !ok {
				return fmt.Errorf("%s: copying the probe %s", p.Name, kind)
			}
			answer := c.Create(ctx, obj, client.DryRunAll)
			v, err := judge(p, answer)
			if v == passed {
				log.Info("Webhook refused the probe as expected", "probe", p.Name, "webhook", p.Webhook,
					"field", p.Field, "attempts", attempt)
				break
			}
			err = fmt.Errorf("%s: dry-run create of %s %s/%s: %w", p.Name, kind, o.Namespace, ProbeName, err)
			if v == failed {
				return err
			}
			if time.Now().Add(interval).After(deadline) {
				return fmt.Errorf("still no answer from the webhooks after %s (attempts: %d): %w",
					o.Timeout, attempt, err)
			}
			log.Info("No answer from the webhooks yet: retrying", "probe", p.Name, "attempt", attempt,
				"answer", answer.Error())
			select {
			case <-ctx.Done():
				return fmt.Errorf("stopped before an answer: %w", err)
			case <-time.After(interval):
			}
		}
	}
	return nil
}
