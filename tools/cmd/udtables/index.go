package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/unified-data/gotables/tables/index"
)

// indexDecls is the repeatable --index flag: name=Column or name=Column:desc.
type indexDecls []index.Declaration

func (d *indexDecls) String() string { return fmt.Sprint(*d) }

func (d *indexDecls) Set(v string) error {
	name, col, ok := strings.Cut(v, "=")
	if !ok || name == "" || col == "" {
		return fmt.Errorf("--index takes name=Column or name=Column:desc, not %q", v)
	}
	col, opt, hasOpt := strings.Cut(col, ":")
	if hasOpt && opt != "desc" {
		return fmt.Errorf("--index %s: the one option after ':' is desc", v)
	}
	*d = append(*d, index.Declaration{Name: name, Column: col, Desc: hasOpt})
	return nil
}

// uniqueDecls is the repeatable --unique flag, name=Column, adding to the same list.
type uniqueDecls struct{ list *indexDecls }

func (u uniqueDecls) String() string {
	if u.list == nil {
		return ""
	}
	return u.list.String()
}

func (u uniqueDecls) Set(v string) error {
	name, col, ok := strings.Cut(v, "=")
	if !ok || name == "" || col == "" || strings.Contains(col, ":") {
		return fmt.Errorf("--unique takes name=Column, not %q", v)
	}
	*u.list = append(*u.list, index.Declaration{Name: name, Column: col, Unique: true})
	return nil
}

func indexCommand() *command {
	return &command{
		name:    "index",
		args:    "verify|rebuild --table T [--index name=Column[:desc]]... [--unique name=Column]... [flags]",
		summary: "check a table's indexes and unique claims against its entities, or rebuild them",
		about: `Index verify compares the index rows of a table (or of one partition) with what its
entities' values call for, and prints what differs: missing and stale index rows, and
entities whose list of index keys is wrong. It changes nothing. Index rebuild writes the
missing rows, deletes the stale ones and corrects the lists, each entity's changes in one
transaction on condition of the version read, so writers may keep writing meanwhile; run it
after adding an index= tag to a type whose table has rows. Running it again is harmless and
resumes an interrupted run.

Declare each index of the entity type with --index, as its tag does: index=number on the
field Number is --index number=Number, index=newest:desc on Placed is --index
newest=Placed:desc (a field of a nested struct has the column Outer_Inner). Give every index
the type declares: an index left out is neither checked nor rebuilt.

Declare each unique index with --unique, as unique=email on Email is --unique email=Email.
Verify reports the values no claim names, the claims in the way of their value's holder,
the stale claims and the values two entities hold (each such duplicate on a line of its
own); rebuild claims the values one entity holds, with the protocol the stores' writes use,
claims no duplicate, and deletes the stale claims. With only --unique flags, the index rows
are left alone.

The account is the flag's, or Azurite's with --azurite, or the one in $` + testConnectionEnv + `.`,
		flags: func(fs *flag.FlagSet) func(context.Context, []string, io.Writer) error {
			account := accountFlags(fs)
			table := fs.String("table", "", "the table (required)")
			partition := fs.String("partition", "", "only this partition")
			var decls indexDecls
			fs.Var(&decls, "index", "an index, as name=Column or name=Column:desc (repeat for each)")
			fs.Var(uniqueDecls{&decls}, "unique", "a unique index, as name=Column (repeat for each)")
			return func(ctx context.Context, args []string, stdout io.Writer) error {
				if len(args) == 0 || (args[0] != "verify" && args[0] != "rebuild") {
					return &usageError{"say verify or rebuild"}
				}
				// The flags after the verb: the flag package stops at the first argument.
				if err := fs.Parse(args[1:]); err != nil {
					return &usageError{err.Error()}
				}
				if rest := fs.Args(); len(rest) > 0 {
					return &usageError{fmt.Sprintf("unexpected argument %q", rest[0])}
				}
				args = args[:1]
				if err := needTable(*table); err != nil {
					return err
				}
				if len(decls) == 0 {
					return &usageError{"declare the table's indexes with --index name=Column or --unique name=Column"}
				}
				cs, err := needAccount(account)
				if err != nil {
					return err
				}
				acct, closeAccount, err := tableAccount(cs)
				if err != nil {
					return err
				}
				defer closeAccount()
				run := index.VerifyTable
				if args[0] == "rebuild" {
					run = index.RebuildTable
				}
				progress := func(r index.Report) {
					fmt.Fprintf(stdout, "partition %d: %d entities, %d index rows so far\n", r.Partitions, r.Entities, r.IndexRows)
				}
				rep, err := run(ctx, acct, *table, decls, *partition, progress)
				if err != nil {
					return err
				}
				for _, d := range rep.Duplicates {
					fmt.Fprintf(stdout, "duplicate: the unique index %s has the value %v in %d entities: %s\n", d.Index, d.Value, len(d.IDs), strings.Join(d.IDs, " "))
				}
				fmt.Fprintf(stdout, "%s: %d partitions, %d entities, %d index rows; %d missing, %d stale, %d entities with a wrong list",
					args[0], rep.Partitions, rep.Entities, rep.IndexRows, rep.Missing, rep.Stale, rep.Unlisted)
				if rep.MissingClaims+rep.WrongClaims+rep.StaleClaims+len(rep.Duplicates) > 0 {
					fmt.Fprintf(stdout, "; claims: %d missing, %d in the way, %d stale, %d duplicate values",
						rep.MissingClaims, rep.WrongClaims, rep.StaleClaims, len(rep.Duplicates))
				}
				if args[0] == "rebuild" {
					fmt.Fprintf(stdout, "; %d repaired\n", rep.Repaired)
					return nil
				}
				fmt.Fprintln(stdout)
				if !rep.Consistent() {
					return fmt.Errorf("the indexes of %s disagree with its entities; run udtables index rebuild (a duplicate value needs one of its entities changed first)", *table)
				}
				return nil
			}
		},
	}
}
