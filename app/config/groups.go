package config

import (
	"regexp"
	"strings"
)

// Groups gives users groups by their verified e-mail address's domain, on
// top of the ones an admin adds (`latchkey users groups add`). Forward-auth
// sends a user's groups as Remote-Groups and access rules may admit by
// them; the OpenID Provider's groups claim carries them.
type Groups struct {
	Rules []GroupRule `yaml:"rules"`
}

// GroupRule puts every user whose verified address is @ one of Domains
// (exactly that domain, not names below it; case-insensitive) in every
// group of Groups. An address no provider verified gets no rule's groups.
type GroupRule struct {
	Domains []string `yaml:"domains"`
	Groups  []string `yaml:"groups"`
}

// groupName is a group's name: 1 to 64 letters, digits, dots, underscores,
// colons and dashes. Names are case-sensitive. The set leaves out commas
// (Remote-Groups is a comma-separated list) and spaces, and every name is
// a header-safe, JSON-plain string.
var groupName = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,64}$`)

// ValidGroupName reports whether name may name a group.
func ValidGroupName(name string) bool { return groupName.MatchString(name) }

// GroupNameRule says what ValidGroupName accepts, for error messages.
const GroupNameRule = "1 to 64 letters, digits, '.', '_', ':' or '-'"

// validateGroups checks every group rule: at least one domain, each like
// example.com, and at least one valid group name.
func (c *Config) validateGroups(add func(string, ...any)) {
	for i, r := range c.Groups.Rules {
		if len(r.Domains) == 0 {
			add("groups.rules[%d]: domains is empty (list domains like example.com)", i)
		}
		for _, d := range r.Domains {
			if !validMailDomain(strings.TrimPrefix(d, "@")) {
				add("groups.rules[%d]: domain %q must be a domain like example.com", i, d)
			}
		}
		if len(r.Groups) == 0 {
			add("groups.rules[%d]: groups is empty (a rule giving no group is more likely a typo)", i)
		}
		for _, g := range r.Groups {
			if !ValidGroupName(g) {
				add("groups.rules[%d]: group %q must be %s", i, g, GroupNameRule)
			}
		}
	}
}
