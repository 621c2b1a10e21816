// Package records is the layout of the replicated store: every key under
// /jobs and /nodes, the one parser of those keys (Parse, JobOf), the
// typed records stored under them with their size-limited strict
// decoders, and the store's author rule (AuthorPolicy). It holds formats,
// not decisions: which of several records counts, and what a processor
// does about it, is the processor's.
//
// The keys, under the store's versioned namespace, with IDs in 64
// lowercase hex digits, numbers in decimal and peers in canonical text:
//
//	key                                                   type        record                     written by
//	/jobs/<job>                                           job         jobs.JobInfo               the creator's node
//	/jobs/<job>/cancel                                    cancel      CancelRecord               the creator's node
//	/jobs/<job>/reveal/<peer>                             reveal      RevealRecord               <peer>, signed by the creator's wallet
//	/jobs/<job>/aborted                                   aborted     JobAborted                 any node
//	/jobs/<job>/group/<chooser>                           group       Group                      <chooser>
//	/jobs/<job>/macro/<m>/room                            room        RoomLock                   the room's owner
//	/jobs/<job>/macro/<m>/took/<peer>                     took        (empty)                    <peer>
//	/jobs/<job>/macro/<m>/micro/<micro>/commit/<peer>     commit      microjob.Commitment        <peer>
//	/jobs/<job>/macro/<m>/micro/<micro>/result/<peer>     result      microjob.Disclosure        <peer>
//	/jobs/<job>/dispute/<block>/<peer>                    dispute     Dispute                    <peer>
//	/jobs/<job>/dispute/<block>/rerun/<peer>              rerun       Rerun                      <peer>
//	/jobs/<job>/check/<block>/<peer>                      check       Check                      <peer>
//	/jobs/<job>/redo/<micro>/<peer>                       redo        Redo                       <peer>
//	/jobs/<job>/failure/<peer>                            failure     FailureReport              <peer>
//	/jobs/<job>/verdict/<peer>                            verdict     VerdictRecord              <peer>
//	/jobs/<job>/holders/<peer>                            holder      Holder                     <peer>
//	/jobs/<job>/settlement                                settlement  SettlementRecord           a finalizer
//	/jobs/<job>/signature/<peer>                          settlesig   escrow.SignedSettlement    <peer>
//	/jobs/<job>/settled                                   settled     SettledRecord              the submitter
//	/nodes/<peer>                                         node        node.Advert                <peer>
//	/nodes/<peer>/wallet                                  wallet      WalletBinding              <peer>
//
// A key that ends with a peer is written by that peer only, so a peer can
// add its own record but never replace another's: AuthorPolicy refuses
// any other author in the store, except for group records, which their
// reader refuses (DecodeGroup). The room lock and the settled record name
// their writer in their content, which their readers check.
package records
