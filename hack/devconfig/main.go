// Command devconfig rewrites webhook client configurations for an operator
// that runs as a local process next to a local API server: every
// `clientConfig.service` in the webhook configurations and CRD conversion
// stanzas read from stdin becomes `clientConfig.url` at -base (for example
// https://localhost:9443), keeping the path. Other objects pass unchanged.
// `make dev` and the e2e suite run config/dev through it, `make install`
// config/crd.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

func main() {
	base := flag.String("base", "https://localhost:9443", "URL the local webhook server is reached at")
	flag.Parse()
	if err := rewrite(os.Stdin, os.Stdout, *base); err != nil {
		fmt.Fprintln(os.Stderr, "devconfig:", err)
		os.Exit(1)
	}
}

func rewrite(in io.Reader, out io.Writer, base string) error {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(in))
	w := bufio.NewWriter(out)
	defer func() { _ = w.Flush() }()
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &obj.Object); err != nil {
			return err
		}
		if obj.Object == nil {
			continue
		}
		switch obj.GetKind() {
		case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
			hooks, _, _ := unstructured.NestedSlice(obj.Object, "webhooks")
			for _, h := range hooks {
				if m, ok := h.(map[string]any); ok {
					toURL(m, base)
				}
			}
			if err := unstructured.SetNestedSlice(obj.Object, hooks, "webhooks"); err != nil {
				return err
			}
		case "CustomResourceDefinition":
			if wh, found, _ := unstructured.NestedMap(obj.Object, "spec", "conversion", "webhook"); found {
				toURL(wh, base)
				if err := unstructured.SetNestedMap(obj.Object, wh, "spec", "conversion", "webhook"); err != nil {
					return err
				}
			}
		}
		data, err := yaml.Marshal(obj.Object)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "---\n%s", data); err != nil {
			return err
		}
	}
}

// toURL replaces hook's clientConfig.service by a url at base.
func toURL(hook map[string]any, base string) {
	cc, ok := hook["clientConfig"].(map[string]any)
	if !ok {
		return
	}
	svc, ok := cc["service"].(map[string]any)
	if !ok {
		return
	}
	path, _ := svc["path"].(string)
	delete(cc, "service")
	cc["url"] = base + path
}
