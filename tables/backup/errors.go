package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"

	"github.com/unified-data/gotables/abstractions"
	"github.com/unified-data/gotables/tables/internal/callerr"
	"github.com/unified-data/gotables/tables/service"
)

// The failures of the services, classified as the stores classify theirs: each matches the
// contract's sentinel (ErrNotFound, ErrUnavailable, context.Canceled, …) with errors.Is and
// keeps the service's answer or the network's error in its chain.

// ownError reports the library's own refusals and findings (callerr.Own) and ErrNotEmpty:
// an error that matches one keeps its kind.
func ownError(err error) bool { return callerr.Own(err) || errors.Is(err, ErrNotEmpty) }

// answered reports whether the service answered the request: with a status, or with a
// transaction's refusal that blames an action.
func answered(err error) bool {
	var se *abstractions.StatusError
	var te *service.TransactionError
	return errors.As(err, &se) || errors.As(err, &te)
}

// unreachable reports a request that got no answer: a refused or reset connection, a
// timeout of one try, a response cut short. A host name that does not resolve is not
// worth asking again. The caller's own context ending is not one either.
func unreachable(err error) bool {
	if err == nil || answered(err) || ownError(err) || errors.Is(err, context.Canceled) {
		return false
	}
	var dns *net.DNSError
	if errors.As(err, &dns) && dns.IsNotFound {
		return false
	}
	var pe *os.PathError // a local file's failure, whose errno looks like a net.Error
	if errors.As(err, &pe) {
		return false
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, abstractions.ErrUnavailable) || errors.Is(err, io.ErrUnexpectedEOF)
}

// serviceError returns err, a failure of a request about a table (and, when pk is set,
// one of its partitions) as an *abstractions.StoreError that matches its sentinel. r says
// whether the request may have changed something; only then does a failure without an
// answer say it may or may not have been applied.
func serviceError(op, table, pk string, r callerr.Request, err error) error {
	if err == nil {
		return nil
	}
	var already *abstractions.StoreError
	if errors.As(err, &already) || ownError(err) {
		return err
	}
	e := &abstractions.StoreError{Op: op, Table: table, PartitionKey: pk, Err: err}
	var se *abstractions.StatusError
	var te *service.TransactionError
	ended, isEnded := callerr.Ended(err, r)
	if errors.As(err, &te) {
		e.Message = fmt.Sprintf("the service refused action %d of the transaction, which was not applied", te.Index)
	}
	switch {
	case isEnded:
		e.Kind, e.Message = ended.Kind, ended.Message
	case errors.As(err, &se):
		msg := e.Message
		if msg != "" {
			msg += ": "
		}
		switch {
		case se.StatusCode == http.StatusNotFound && se.ErrorCode == "TableNotFound":
			e.Kind, e.Message = abstractions.ErrNotFound, "the table does not exist"
		case se.StatusCode == http.StatusNotFound && se.ErrorCode == "ContainerNotFound":
			e.Kind, e.Message = abstractions.ErrNotFound, "the blob container does not exist"
		case se.StatusCode == http.StatusNotFound:
			e.Kind, e.Message = abstractions.ErrNotFound, msg+"a row or blob the request needs does not exist"
		case se.StatusCode == http.StatusConflict && se.ErrorCode == "EntityAlreadyExists":
			e.Kind, e.Message = abstractions.ErrDuplicateKey, msg+"a row with this key already exists"
		case se.StatusCode == http.StatusPreconditionFailed:
			e.Kind, e.Message = abstractions.ErrConcurrencyConflict, msg+"a row or blob changed meanwhile"
		default:
			f := callerr.Answered(se, r, msg+"the service refused the request")
			e.Kind, e.Message = f.Kind, f.Message
		}
	default:
		f := callerr.Unreachable(r)
		e.Kind, e.Message = f.Kind, f.Message
	}
	return e
}
