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

package settings

import (
	"fmt"
	"strconv"

	"go.uber.org/zap/zapcore"
)

// ParseLevel turns a log level as the OperatorConfiguration and
// --zap-log-level spell it (error, info, debug, or a number n of V levels)
// into a zap level: V level n is zap level -n.
func ParseLevel(level string) (zapcore.Level, error) {
	switch level {
	case "error":
		return zapcore.ErrorLevel, nil
	case "info", "":
		return zapcore.InfoLevel, nil
	case "debug":
		return zapcore.DebugLevel, nil
	}
	n, err := strconv.Atoi(level)
	if err != nil || n < 0 || n > 127 {
		return 0, fmt.Errorf("log level %q is not error, info, debug or a number of V levels", level)
	}
	return zapcore.Level(-n), nil
}

// LevelName spells a zap level as ParseLevel reads it.
func LevelName(l zapcore.Level) string {
	switch {
	case l >= zapcore.ErrorLevel:
		return "error"
	case l >= zapcore.InfoLevel:
		return "info"
	case l == zapcore.DebugLevel:
		return "debug"
	}
	return strconv.Itoa(-int(l))
}
