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
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Bounds of what an Application hands the operator to copy into its
// children, in bytes of the JSON encoding: spec.deployment becomes the
// Deployment's spec, spec.service the Service's. They embed the core types
// (a Pod template, a Service spec), inside which a CRD schema can carry no
// maxItems or maxLength of its own, so ValidateSizes bounds each whole:
// every list and string inside (containers, env, volumes, args, ports,
// selectors, annotations of the Pod template...) is bounded by it.
//
// Without them only the API server bounds an Application: 3 MiB per
// request, about 1.5 MiB per object in etcd. That is too much for what the
// operator does with one: the cache holds it and its Deployment, and a
// reconcile turns the template into maps several times (drift check, apply
// configuration), each list entry a map of a few hundred bytes however
// short its JSON: the drift check alone allocates tens of times the
// template's size for a template of short env entries (docs/security.md
// has the measurement), and the operator runs 16 reconciles at once
// (--max-concurrent-reconciles): a handful of maximal Applications would
// take a replica past its 256 MiB limit, then the standby replica that
// takes over. 128 KiB is more than ten times the Pod templates of common
// charts (sidecars, long env lists); a Service spec needs much less.
//
// Both the validating webhook (at admission) and the controller (before it
// copies anything, so that the bounds hold when no webhook runs) call
// ValidateSizes.
const (
	MaxDeploymentBytes = 128 << 10
	MaxServiceBytes    = 64 << 10
	// MaxAutoscalingBytes and MaxRouteBytes bound spec.autoscaling (whose
	// metrics carry selectors and names of their own) and spec.route, as
	// the other parts the operator copies into a child.
	MaxAutoscalingBytes = 16 << 10
	MaxRouteBytes       = 16 << 10
)

// ValidateSizes returns an error for each of spec.deployment,
// spec.service, spec.autoscaling and spec.route that is larger, as JSON,
// than its bound (MaxDeploymentBytes, MaxServiceBytes,
// MaxAutoscalingBytes, MaxRouteBytes), naming the field.
func ValidateSizes(app *Application) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	for _, part := range []struct {
		path  *field.Path
		value any
		max   int
	}{
		{spec.Child("deployment"), &app.Spec.Deployment, MaxDeploymentBytes},
		{spec.Child("service"), &app.Spec.Service, MaxServiceBytes},
		{spec.Child("autoscaling"), app.Spec.Autoscaling, MaxAutoscalingBytes},
		{spec.Child("route"), app.Spec.Route, MaxRouteBytes},
	} {
		data, err := json.Marshal(part.value)
		if err != nil {
			errs = append(errs, field.InternalError(part.path, err))
			continue
		}
		if len(data) > part.max {
			e := field.TooLong(part.path, "", part.max)
			e.Detail = fmt.Sprintf("is %d bytes as JSON, may not be more than %d bytes (the operator copies it into the Application's children)",
				len(data), part.max)
			errs = append(errs, e)
		}
	}
	return errs
}
