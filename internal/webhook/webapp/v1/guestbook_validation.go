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

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	webappv1 "sunstrider.cn/operator/api/webapp/v1"
	"sunstrider.cn/operator/internal/settings"
)

// Bounds of a Guestbook's spec, as in its CRD schema.
const (
	minSize              = 1
	maxSize              = 10
	maxConfigMapNameSize = 15
)

// supportedAliases are the values of spec.alias.
var supportedAliases = []string{string(webappv1.AliasPhone), string(webappv1.AliasAddress), string(webappv1.AliasName)}

const msgImmutable = "field is immutable"

var specPath = field.NewPath("spec")

// validateGuestbook returns every rule gb breaks.
func validateGuestbook(gb *webappv1.Guestbook) field.ErrorList {
	return slices.Concat(
		validateSize(gb.Spec.Size, specPath.Child("size")),
		validateConfigMapName(gb.Spec.ConfigMapName, specPath.Child("configMapName")),
		validateAlias(gb.Spec.Type, specPath.Child("alias")),
		validateNamespace(gb.Spec.Namespace, specPath.Child("namespace")),
	)
}

// validateGuestbookUpdate returns every rule the update from old to gb
// breaks. An unchanged spec passes.
func validateGuestbookUpdate(old, gb *webappv1.Guestbook) field.ErrorList {
	if old.Spec == gb.Spec {
		return nil
	}
	var errs field.ErrorList
	if old.Spec.Namespace != "" && gb.Spec.Namespace != old.Spec.Namespace {
		errs = append(errs, field.Invalid(specPath.Child("namespace"), gb.Spec.Namespace, msgImmutable))
	}
	return append(errs, validateGuestbook(gb)...)
}

// validateSize requires minSize..maxSize instances.
func validateSize(size int32, path *field.Path) field.ErrorList {
	if msgs := validation.IsInRange(int(size), minSize, maxSize); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(path, size, msgs[0])}
	}
	return nil
}

// validateConfigMapName requires a DNS-1123 label (the schema's pattern,
// stricter than a ConfigMap name) of at most maxConfigMapNameSize characters.
func validateConfigMapName(name string, path *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	var errs field.ErrorList
	if len(name) > maxConfigMapNameSize {
		errs = append(errs, field.TooLong(path, "", maxConfigMapNameSize))
	}
	for _, msg := range validation.IsDNS1123Label(name) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	return errs
}

// validateAlias accepts an unset alias or one of supportedAliases.
func validateAlias(alias webappv1.GuestbookAlias, path *field.Path) field.ErrorList {
	if alias == "" || slices.Contains(supportedAliases, string(alias)) {
		return nil
	}
	return field.ErrorList{field.NotSupported(path, alias, supportedAliases)}
}

// validatePlacement refuses a Guestbook whose workload would land in a
// system namespace (kube-*) that allowed, the OperatorConfiguration's
// spec.guestbookSystemNamespaces, does not list, whatever the author's
// rights: the operator's own would make it there (Delegated mode), and a
// workload beside the control plane's is an administrator's decision.
func validatePlacement(gb *webappv1.Guestbook, allowed []string) field.ErrorList {
	ns := gb.Spec.Namespace
	if !settings.GuestbookNamespaceRefused(ns, allowed) {
		return nil
	}
	return field.ErrorList{field.Forbidden(specPath.Child("namespace"), fmt.Sprintf(
		"%s is a system namespace: a Guestbook may use a namespace starting with %q only when an administrator "+
			"lists it in %s of the OperatorConfiguration (docs/security.md)",
		ns, settings.SystemNamespacePrefix, settings.GuestbookSystemNamespacesField))}
}

// validateNamespace requires a namespace name: a DNS-1123 label.
func validateNamespace(ns string, path *field.Path) field.ErrorList {
	if ns == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(ns) {
		errs = append(errs, field.Invalid(path, ns, msg))
	}
	return errs
}
