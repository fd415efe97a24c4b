package admin

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/latchkey-auth/latchkey/app"
	"github.com/latchkey-auth/latchkey/app/config"
	"github.com/latchkey-auth/latchkey/app/groups"
	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/groupstore"
)

// `latchkey users groups add|remove <email|id> <group>` and
// `latchkey users groups list [<email|id>]`: the memberships an admin
// gives (stored; groups from the config's groups rules are computed and
// only listed). Running instances keep a user's groups in memory for
// app.GroupsCacheTTL, so a change reaches them within it.

// groupsUsage is each sub-command's synopsis, for check's errors.
var groupsUsage = map[string]string{
	"add":    "users groups add <email|id> <group>",
	"remove": "users groups remove <email|id> <group>",
	"list":   "users groups list [<email|id>]",
}

// checkGroups refuses an unknown sub-command, a wrong number of arguments
// for it, or a group name no group can have, before the database is opened.
func checkGroups(r *adminRun) error {
	action := r.args[0]
	usage, ok := groupsUsage[action]
	if !ok {
		return fmt.Errorf("unknown groups command %q (one of: add, remove, list)", action)
	}
	if n := len(r.args); (action == "list" && n > 2) || (action != "list" && n != 3) {
		return fmt.Errorf("groups %s takes %s", action, strings.TrimPrefix(usage, "users groups "+action+" "))
	}
	if len(r.args) == 3 && !config.ValidGroupName(r.args[2]) {
		return fmt.Errorf("group %q: %w", r.args[2], groups.ErrInvalidName)
	}
	return nil
}

func usersGroups(r *adminRun) error {
	svc := groups.New(groupstore.New(r.store), r.cfg.Groups.Rules, 0)
	if r.args[0] == "list" && len(r.args) == 1 {
		return r.listAllGroups(svc)
	}
	u, err := r.findUser(r.args[1])
	if errors.Is(err, errNoUser) || (err != nil && strings.TrimSpace(r.args[1]) == "") {
		return badInput{err}
	}
	if err != nil {
		return err
	}
	var verified *string
	if u.EmailVerified != nil {
		verified = u.Email
	}
	l, err := svc.List(r.ctx, u.ID, verified)
	if err != nil {
		return err
	}
	switch r.args[0] {
	case "list":
		fmt.Fprintln(r.out, "user "+label(u)+": "+describeGroups(l))
		return nil
	case "add":
		return r.addToGroup(svc, u, r.args[2])
	default:
		return r.removeFromGroup(svc, u, l, r.args[2])
	}
}

func (r *adminRun) addToGroup(svc *groups.Service, u *models.User, name string) error {
	added, err := svc.Add(r.ctx, u.ID, name, r.now)
	if err != nil {
		return err
	}
	if !added {
		return fmt.Errorf("user %s is in group %s already; nothing changed", label(u), name)
	}
	fmt.Fprintf(r.out, "added user %s to group %s; %s\n", label(u), name, groupsNote())
	return nil
}

func (r *adminRun) removeFromGroup(svc *groups.Service, u *models.User, l groups.Listing, name string) error {
	removed, err := svc.Remove(r.ctx, u.ID, name)
	if err != nil {
		return err
	}
	if !removed {
		why := fmt.Sprintf("user %s was not added to group %s", label(u), name)
		for _, g := range l.Ruled {
			if g == name {
				why += " (a groups rule of the configuration gives it to the user's verified domain: change the rule)"
			}
		}
		return fmt.Errorf("%s; nothing changed", why)
	}
	fmt.Fprintf(r.out, "removed user %s from group %s; %s\n", label(u), name, groupsNote())
	return nil
}

// listAllGroups prints every stored group with its number of members,
// then the groups the config's rules give, by domain.
func (r *adminRun) listAllGroups(svc *groups.Service) error {
	counts, err := svc.Counts(r.ctx)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(r.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "GROUP\tMEMBERS")
	for _, c := range counts {
		fmt.Fprintf(w, "%s\t%d\n", c.Name, c.Members)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(r.out, plural(int64(len(counts)), "group")+" with members added by an admin")
	for _, rule := range r.cfg.Groups.Rules {
		fmt.Fprintf(r.out, "groups rule: verified addresses @ %s are in %s\n", strings.Join(rule.Domains, ", "), strings.Join(rule.Groups, ", "))
	}
	return nil
}

// describeGroups is a user's groups in one line, by source.
func describeGroups(l groups.Listing) string {
	var parts []string
	if len(l.Stored) > 0 {
		parts = append(parts, strings.Join(l.Stored, ", ")+" (added)")
	}
	if len(l.Ruled) > 0 {
		parts = append(parts, strings.Join(l.Ruled, ", ")+" (by a groups rule for the verified address's domain)")
	}
	if len(parts) == 0 {
		return "no groups"
	}
	return strings.Join(parts, "; ")
}

// groupsNote is when running instances see a change.
func groupsNote() string {
	return fmt.Sprintf("running instances see it within %s", app.GroupsCacheTTL)
}
