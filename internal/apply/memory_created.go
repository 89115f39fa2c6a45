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

package apply

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CreatedTTL is how long CreatedChildren vouches for a child it saw created
// while the cache does not hold it. The cache holds a new child within
// milliseconds to a second; past CreatedTTL the child is looked for as if
// never created (a create, which finds it if it exists).
const CreatedTTL = 5 * time.Second

// CreatedChildren remembers, for one controller, the children it created,
// as the create returned them, until its cache holds them: the "expectations"
// of the ReplicaSet controller, for a server-side apply path.
//
// Without it, a reconcile that follows a create at once (the new
// Deployment's own event, handled before the new Service's reached the
// cache) reads the Service as absent and creates it again: the API server
// refuses that (the child exists), the refusal is followed by a read of the
// child, and the child is then found to be the parent's own: a request
// and a read wasted per such reconcile, which a burst of Applications
// showed often (docs/performance.md).
//
// A remembered child is forgotten as soon as the cache holds an object of
// its name, and vouched for no longer than CreatedTTL: a child deleted
// before the cache ever held it is then created again by the reconcile
// that follows (Applier.Remembered asks for one).
//
// Hand-written: controller-runtime's cache has no read-your-writes, and
// the ReplicaSet controller's expectations (k8s.io/kubernetes) count Pods
// by owner rather than remember named objects, and are not a library.
type CreatedChildren struct {
	mu      sync.Mutex
	objects map[createdKey]createdChild
	// now is the clock; time.Now when nil.
	now func() time.Time
}

type createdKey struct {
	gvk schema.GroupVersionKind
	key types.NamespacedName
}

type createdChild struct {
	obj client.Object
	at  time.Time
}

func (c *CreatedChildren) clock() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}

// remember records obj, of kind gvk, as just created.
func (c *CreatedChildren) remember(gvk schema.GroupVersionKind, obj client.Object) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.objects == nil {
		c.objects = map[createdKey]createdChild{}
	}
	c.objects[createdKey{gvk, client.ObjectKeyFromObject(obj)}] = createdChild{obj: obj.DeepCopyObject().(client.Object), at: c.clock()}
}

// get returns a copy of the child of kind gvk at key created less than
// CreatedTTL ago, and how much longer it is vouched for; false when there
// is none (an older one is forgotten).
func (c *CreatedChildren) get(gvk schema.GroupVersionKind, key types.NamespacedName) (client.Object, time.Duration, bool) {
	if c == nil {
		return nil, 0, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	k := createdKey{gvk, key}
	child, ok := c.objects[k]
	if !ok {
		return nil, 0, false
	}
	left := CreatedTTL - c.clock().Sub(child.at)
	if left <= 0 {
		c.forgetLocked(k)
		return nil, 0, false
	}
	return child.obj.DeepCopyObject().(client.Object), left, true
}

// seen forgets the child of kind gvk at key: the cache holds an object of
// its name.
func (c *CreatedChildren) seen(gvk schema.GroupVersionKind, key types.NamespacedName) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.objects) > 0 {
		c.forgetLocked(createdKey{gvk, key})
	}
}

// forgetLocked drops k; the map goes with its last entry, so that a burst
// does not leave its room in the heap (as WrittenObjects does).
func (c *CreatedChildren) forgetLocked(k createdKey) {
	delete(c.objects, k)
	if len(c.objects) == 0 {
		c.objects = nil
	}
}

// Len is the number of children remembered.
func (c *CreatedChildren) Len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.objects)
}
