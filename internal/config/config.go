// Package config layers a command's settings: command-line flags first, then
// environment variables, then an optional JSON file, then the defaults the
// flags declare. Every setting is a flag, so `--help` documents them all.
package config

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
)

// EnvName returns the environment variable for a flag: prefix + the flag
// name in upper case with dashes as underscores ("max-body" → RSHUB_MAX_BODY).
func EnvName(prefix, flagName string) string {
	return prefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// Apply fills every flag of fs that was not set on the command line from the
// environment (lookup, usually os.LookupEnv) and then from the JSON object in
// file (keys are flag names; "" means no file). Unknown keys in the file and
// values a flag refuses are errors that name the setting and its source.
func Apply(fs *flag.FlagSet, prefix, file string, lookup func(string) (string, bool)) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	fileVals := map[string]string{}
	if file != "" {
		raw, err := os.ReadFile(file)
		if err != nil {
			return fmt.Errorf("config file: %w", err)
		}
		var obj map[string]any
		if err := json.Unmarshal(raw, &obj); err != nil {
			return fmt.Errorf("config file %s: %w", file, err)
		}
		for k, v := range obj {
			if fs.Lookup(k) == nil {
				return fmt.Errorf("config file %s: unknown setting %q (see --help)", file, k)
			}
			switch x := v.(type) {
			case string:
				fileVals[k] = x
			case bool, float64:
				fileVals[k] = fmt.Sprint(x)
			case []any:
				parts := make([]string, len(x))
				for i, p := range x {
					parts[i] = fmt.Sprint(p)
				}
				fileVals[k] = strings.Join(parts, ",")
			default:
				return fmt.Errorf("config file %s: setting %q must be a string, number, boolean or list", file, k)
			}
		}
	}
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] {
			return
		}
		env := EnvName(prefix, f.Name)
		if v, ok := lookup(env); ok {
			if err := f.Value.Set(v); err != nil {
				errs = append(errs, fmt.Errorf("%s=%q: %w", env, v, err))
			}
			return
		}
		if v, ok := fileVals[f.Name]; ok {
			if err := f.Value.Set(v); err != nil {
				errs = append(errs, fmt.Errorf("config file setting %q=%q: %w", f.Name, v, err))
			}
		}
	})
	return errors.Join(errs...)
}

// Usage prints a command's flags with their environment variables.
func Usage(fs *flag.FlagSet, prefix, intro string) func() {
	return func() {
		out := fs.Output()
		fmt.Fprint(out, intro)
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		sort.Strings(names)
		for _, n := range names {
			f := fs.Lookup(n)
			typ, usage := flag.UnquoteUsage(f)
			fmt.Fprintf(out, "  --%s %s\n    \t%s", n, typ, strings.ReplaceAll(usage, "\n", "\n    \t"))
			if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "[]" {
				fmt.Fprintf(out, " (default %s)", f.DefValue)
			}
			fmt.Fprintf(out, "\n    \tenv %s\n", EnvName(prefix, n))
		}
	}
}

// Parse parses args into fs and then applies the environment and the JSON
// file named by *configFile (a flag of fs, or its environment variable),
// refusing stray arguments. It is the whole settings pass of a command.
func Parse(fs *flag.FlagSet, prefix string, args []string, lookup func(string) (string, bool), configFile *string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q (see --help)", fs.Args())
	}
	if v, ok := lookup(EnvName(prefix, "config")); ok && *configFile == "" {
		*configFile = v
	}
	return Apply(fs, prefix, *configFile, lookup)
}
