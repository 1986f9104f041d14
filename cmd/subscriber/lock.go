package main

import (
	"errors"
	"fmt"

	"github.com/rshub/rshub/client/mirror"
)

// lockDir takes the lock of the directory the settings keep in step
// (--mirror, or --dataset), so that a second subscriber on it is refused
// naming the one that has it, and returns its release; settings that keep
// no directory (--list-datasets) lock nothing.
func lockDir(s settings) (release func(), err error) {
	flag, dir := "--mirror", s.Mirror
	if s.Dataset != "" {
		flag, dir = "--dataset", s.Dataset
	}
	if dir == "" || s.ListDatasets {
		return func() {}, nil
	}
	l, err := mirror.LockDir(dir)
	var iu *mirror.InUseError
	if errors.As(err, &iu) {
		return nil, fmt.Errorf("%s %s is in use by %s, another subscriber (lock file %s): stop it first, or give this one another %s", flag, dir, iu.Holder, iu.LockFile, flag)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	return func() { _ = l.Release() }, nil
}
