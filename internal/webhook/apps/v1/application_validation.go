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
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
)

// Messages of the rules that have no helper in the validation packages.
const (
	msgSelectorImmutable = "field is immutable once set"
	msgSelectorMismatch  = "`selector` does not match template `labels`"
	msgNameRequired      = "must be set when the Service has more than one port"
	msgNodePortForbidden = "may only be set when type is NodePort or LoadBalancer"
	msgContainerRequired = "the Pod template needs at least one container"
)

var (
	specPath       = field.NewPath("spec")
	deploymentPath = specPath.Child("deployment")
	servicePath    = specPath.Child("service")
)

// validateApplication returns every rule app breaks.
func validateApplication(app *sunappsv1.Application) field.ErrorList {
	if errs := sunappsv1.ValidateSizes(app); len(errs) > 0 {
		// The other rules would only describe an object refused anyway.
		return errs
	}
	d := &app.Spec.Deployment
	return slices.Concat(
		validateReplicas(d.Replicas, deploymentPath.Child("replicas")),
		validateSelector(d.Selector, deploymentPath.Child("selector")),
		validateTemplateLabels(d, deploymentPath),
		validateContainers(d.Template.Spec.Containers, deploymentPath.Child("template", "spec", "containers")),
		validateServicePorts(&app.Spec.Service.ServiceSpec, servicePath),
		validateServiceType(&app.Spec.Service.ServiceSpec, servicePath.Child("type")),
	)
}

// supportedServiceTypes are the types the API server accepts for a Service.
var supportedServiceTypes = []string{string(corev1.ServiceTypeClusterIP), string(corev1.ServiceTypeNodePort),
	string(corev1.ServiceTypeLoadBalancer), string(corev1.ServiceTypeExternalName)}

// validateServiceType refuses a type the API server would refuse, when
// there is a Service to make (it has ports); empty is ClusterIP.
func validateServiceType(svc *corev1.ServiceSpec, path *field.Path) field.ErrorList {
	if len(svc.Ports) == 0 || svc.Type == "" || slices.Contains(supportedServiceTypes, string(svc.Type)) {
		return nil
	}
	return field.ErrorList{field.NotSupported(path, svc.Type, supportedServiceTypes)}
}

// validateApplicationUpdate returns every rule the update from old to app
// breaks. An unchanged spec passes.
func validateApplicationUpdate(old, app *sunappsv1.Application) field.ErrorList {
	if equality.Semantic.DeepEqual(old.Spec, app.Spec) {
		return nil
	}
	errs := validateSelectorUnchanged(old.Spec.Deployment.Selector, app.Spec.Deployment.Selector, deploymentPath.Child("selector"))
	return append(errs, validateApplication(app)...)
}

// validateSelectorUnchanged rejects a change of a selector that was set: the
// Deployment's selector cannot change.
func validateSelectorUnchanged(old, selector *metav1.LabelSelector, path *field.Path) field.ErrorList {
	if sunappsv1.IsEmptySelector(old) || equality.Semantic.DeepEqual(old, selector) {
		return nil
	}
	return field.ErrorList{field.Invalid(path, selector, msgSelectorImmutable)}
}

// validateSelector checks the syntax of the selector's labels and
// expressions.
func validateSelector(selector *metav1.LabelSelector, path *field.Path) field.ErrorList {
	if selector == nil {
		return nil
	}
	return metav1validation.ValidateLabelSelector(selector, metav1validation.LabelSelectorValidationOptions{}, path)
}

// validateTemplateLabels checks the Pod template's labels and that the
// selector, when there is one, selects them.
func validateTemplateLabels(d *sunappsv1.DeploymentTemplate, path *field.Path) field.ErrorList {
	labelsPath := path.Child("template", "metadata", "labels")
	errs := metav1validation.ValidateLabels(d.Template.Labels, labelsPath)
	if sunappsv1.IsEmptySelector(d.Selector) {
		return errs
	}
	selector, err := metav1.LabelSelectorAsSelector(d.Selector)
	if err != nil {
		// validateSelector reports the reason.
		return errs
	}
	if !selector.Matches(labels.Set(d.Template.Labels)) {
		errs = append(errs, field.Invalid(labelsPath, d.Template.Labels, msgSelectorMismatch))
	}
	return errs
}

// validateReplicas refuses a negative replica count, as the CRD's schema
// does (minimum 0): the validator's verdict is the API server's.
func validateReplicas(replicas *int32, path *field.Path) field.ErrorList {
	if replicas != nil && *replicas < 0 {
		return field.ErrorList{field.Invalid(path, *replicas, "must be greater than or equal to 0")}
	}
	return nil
}

// validateContainers requires at least one container, each with a unique
// DNS-1123 label name and an image.
func validateContainers(containers []corev1.Container, path *field.Path) field.ErrorList {
	if len(containers) == 0 {
		return field.ErrorList{field.Required(path, msgContainerRequired)}
	}
	var errs field.ErrorList
	names := sets.New[string]()
	for i := range containers {
		c := &containers[i]
		p := path.Index(i)
		switch {
		case c.Name == "":
			errs = append(errs, field.Required(p.Child("name"), ""))
		case names.Has(c.Name):
			errs = append(errs, field.Duplicate(p.Child("name"), c.Name))
		default:
			for _, msg := range validation.IsDNS1123Label(c.Name) {
				errs = append(errs, field.Invalid(p.Child("name"), c.Name, msg))
			}
		}
		names.Insert(c.Name)
		if c.Image == "" {
			errs = append(errs, field.Required(p.Child("image"), ""))
		}
	}
	return errs
}

// supportedProtocols are the protocols of a Service port.
var supportedProtocols = []string{string(corev1.ProtocolTCP), string(corev1.ProtocolUDP), string(corev1.ProtocolSCTP)}

// validateServicePorts checks each port of svc: a name when there are
// several, unique names, port and targetPort in range, a supported protocol,
// unique port and protocol pairs, and a nodePort only on NodePort and
// LoadBalancer Services.
func validateServicePorts(svc *corev1.ServiceSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	keys := sets.New[string]()
	nodePortAllowed := svc.Type == corev1.ServiceTypeNodePort || svc.Type == corev1.ServiceTypeLoadBalancer
	for i := range svc.Ports {
		p := &svc.Ports[i]
		pp := path.Child("ports").Index(i)
		errs = append(errs, validatePortName(p.Name, len(svc.Ports) > 1, names, pp.Child("name"))...)
		names.Insert(p.Name)
		if msgs := validation.IsInRange(int(p.Port), 1, 65535); len(msgs) > 0 {
			errs = append(errs, field.Invalid(pp.Child("port"), p.Port, msgs[0]))
		}
		protocol := p.Protocol
		if protocol == "" {
			protocol = corev1.ProtocolTCP
		}
		if !sets.New(supportedProtocols...).Has(string(protocol)) {
			errs = append(errs, field.NotSupported(pp.Child("protocol"), protocol, supportedProtocols))
		}
		key := fmt.Sprintf("%d/%s", p.Port, protocol)
		if keys.Has(key) {
			errs = append(errs, field.Duplicate(pp, key))
		}
		keys.Insert(key)
		errs = append(errs, validateTargetPort(p.TargetPort, pp.Child("targetPort"))...)
		errs = append(errs, validateNodePort(p.NodePort, nodePortAllowed, pp.Child("nodePort"))...)
	}
	return errs
}

// validatePortName requires a name when required, and a unique DNS-1123
// label when set. seen holds the names of the previous ports.
func validatePortName(name string, required bool, seen sets.Set[string], path *field.Path) field.ErrorList {
	switch {
	case name == "" && required:
		return field.ErrorList{field.Required(path, msgNameRequired)}
	case name == "":
		return nil
	case seen.Has(name):
		return field.ErrorList{field.Duplicate(path, name)}
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(name) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	return errs
}

// validateTargetPort accepts an unset targetPort (the port), a number in
// 1..65535 or an IANA service name.
func validateTargetPort(target intstr.IntOrString, path *field.Path) field.ErrorList {
	var msgs []string
	switch {
	case target == intstr.IntOrString{}:
		return nil
	case target.Type == intstr.String:
		msgs = validation.IsValidPortName(target.StrVal)
	default:
		msgs = validation.IsValidPortNum(int(target.IntVal))
	}
	errs := make(field.ErrorList, 0, len(msgs))
	for _, msg := range msgs {
		errs = append(errs, field.Invalid(path, target.String(), msg))
	}
	return errs
}

// validateNodePort accepts an unset nodePort, or a port number on a Service
// type that has node ports. Whether the number lies in the node port range,
// and is free, only the API server knows (its --service-node-port-range is
// set per cluster): it refuses the Service then, and the Application
// reports Ready=False, reason ApplyFailed, and Stalled.
func validateNodePort(nodePort int32, allowed bool, path *field.Path) field.ErrorList {
	switch {
	case nodePort == 0:
		return nil
	case !allowed:
		return field.ErrorList{field.Forbidden(path, msgNodePortForbidden)}
	}
	if msgs := validation.IsValidPortNum(int(nodePort)); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(path, nodePort, msgs[0])}
	}
	return nil
}
