package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/ssgen/ssgen/internal/policy"
)

func init() {
	register(verb{name: "authz", summary: "print the broker's authorization rules for the schema's roles", run: runAuthz})
}

const authzUsage = `[--format broker|serve] [--name NAME] [--namespace NS] [-o FILE] [schema file, default ssgen.yaml]

Prints the authorization rules that give each role of the schema exactly
the access its grants say, and nothing else:

  broker  a BrokerAuthorization manifest for the Azure IoT Operations MQTT
          broker (kubectl apply -f), one rule per role: its principals, the
          MQTT topics a state store client needs (connect, publish requests,
          subscribe to its responses and notifications) and its
          stateStoreResources (keyType String or Pattern, keys, method Read,
          Write or ReadWrite)
  serve   the same state store rules as a file for ssgen serve --authz-file

Keys without parameters are named exactly (String), others by a pattern in
which each parameter is '*' (Pattern). See docs/cli.md.`

func runAuthz(_ context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "authz", authzUsage)
	format := fs.String("format", "broker", "what to print, `broker|serve`: broker (a BrokerAuthorization manifest) or serve (ssgen serve --authz-file)")
	name := fs.String("name", "", "the BrokerAuthorization's metadata.name, `NAME` (default ssgen-PACKAGE)")
	namespace := fs.String("namespace", "azure-iot-operations", "the BrokerAuthorization's metadata.namespace, `NS`")
	out := fs.String("o", "", "write to `FILE` instead of stdout")
	in, err := openSchema(env, fs, args, nil, func() error {
		if *format != "broker" && *format != "serve" {
			return usageErrorf("--format %q: want broker or serve", *format)
		}
		return nil
	})
	if in == nil {
		return err
	}
	file, s := in.file, in.schema
	if len(s.Roles) == 0 {
		return nothingToPrint("%s declares no roles, so there are no rules to print: add roles (see docs/schema.md)", file)
	}
	rules := policy.Rules(s)
	source := filepath.Base(file)
	if *format == "serve" {
		return writeOutput(env, *out, func(w io.Writer) error {
			dropped, err := policy.WriteServe(w, rules, source)
			if len(dropped) > 0 {
				fmt.Fprintf(env.stderr, "ssgen authz: ssgen serve knows no attributes; left out of role(s) %s\n", strings.Join(dropped, ", "))
			}
			return err
		})
	}
	if *name == "" {
		*name = "ssgen-" + strings.ReplaceAll(s.Package, "_", "-")
	}
	return writeOutput(env, *out, func(w io.Writer) error {
		return policy.WriteBroker(w, rules, policy.BrokerOptions{Name: *name, Namespace: *namespace, Source: source})
	})
}
