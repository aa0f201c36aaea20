//! Statements on concrete states: locals, assignments (field writes open the
//! instances that fold the location), calls (the precondition's permissions move to
//! the callee, the postcondition's back), `new`, loops with invariants, `join`, and
//! the ghost statements `open`, `close`, `use`.
//!
//! Architecture invariant: a raw failure is finalized by the statement it happened in
//! (its reason is the id) or by the consumed assertion it happened in (that
//! assertion's id), always for the member of the current activation. Loops and joins
//! keep exactly the permissions the verifier keeps: a loop body holds only what its
//! invariant gave (the rest of the caller's bag waits outside), and after `join A` the
//! activation holds only what `A` consumed.

use super::assertion::{Consumed, Mode};
use super::error::{Ctx, R, Stop, raw};
use super::eval::{negative, truth};
use super::perm::{Bag, Loc};
use super::rat::Rat;
use super::value::{ObjKind, Object, Value, mentions_old};
use super::{Cx, Frame, Interp, Old, grow};
use crate::syntax::ast::{
    Body, Expr, ExprKind, MemberKind, MemberRef, Rhs, Span, Stmt, StmtKind, Type,
};
use num_traits::ToPrimitive;
use std::rc::Rc;

/// Why a run stops, unjudged, at an interface's member (a predicate family or a
/// dynamically bound call): the interpreter does not dispatch on classes yet, so such
/// a run is set aside (like inputs the precondition rejects), never called a failure.
pub const UNDISPATCHED: &str = "an interface member (dynamic dispatch is not interpreted)";

/// How a statement ended.
pub enum Flow {
    Normal,
    Return(Option<Value>),
}

/// Does any statement mention `old` or `untouched`?
pub fn stmts_mention_old(stmts: &[Stmt]) -> bool {
    stmts.iter().any(|st| match &st.kind {
        StmtKind::Local { init, .. } => init.as_ref().is_some_and(rhs_mentions_old),
        StmtKind::Assign { lhs, rhs } => mentions_old(lhs) || rhs_mentions_old(rhs),
        StmtKind::Call(e)
        | StmtKind::Assert(e)
        | StmtKind::Open(e)
        | StmtKind::Close(e)
        | StmtKind::Use(e)
        | StmtKind::Join(e) => mentions_old(e),
        StmtKind::If { cond, then, els } => {
            mentions_old(cond)
                || stmts_mention_old(&then.stmts)
                || els.as_ref().is_some_and(|s| stmts_mention_old(std::slice::from_ref(&**s)))
        }
        StmtKind::While { cond, invariants, body } => {
            mentions_old(cond)
                || invariants.iter().any(mentions_old)
                || stmts_mention_old(&body.stmts)
        }
        StmtKind::Return(e) => e.as_ref().is_some_and(mentions_old),
        StmtKind::Block(b) => stmts_mention_old(&b.stmts),
    })
}

fn rhs_mentions_old(r: &Rhs) -> bool {
    match r {
        Rhs::Expr(e) => mentions_old(e),
        Rhs::New { args, .. } => args.iter().any(mentions_old),
        Rhs::NewArray { len, .. } => mentions_old(len),
    }
}

/// The evaluation context of a frame's state: its locals and `old` over `view`'s bags
/// (a macro, not a method: callers go on to borrow other fields of the frame mutably).
macro_rules! frame_cx {
    ($self:expr, $f:expr, $view:expr) => {
        Cx {
            heap: &$self.heap,
            view: $view,
            locals: &$f.locals,
            old: $f.old.as_deref(),
            pview: None,
        }
    };
}

impl<'p> Interp<'p> {
    /// Evaluate `e` in the frame's state (a raw failure stays raw).
    fn eval_in_frame(&self, f: &Frame, e: &'p Expr) -> R<Value> {
        let view = [&f.bag];
        let cx = frame_cx!(self, f, &view);
        self.eval(&cx, e)
    }

    /// Consume `es` from the frame's bag under `ctx`; returns what was removed.
    fn consume_in_frame(
        &self,
        f: &mut Frame,
        es: &'p [Expr],
        ctx: Ctx,
        remove: bool,
    ) -> R<Consumed> {
        let before = f.bag.clone();
        let view = [&before];
        let cx = frame_cx!(self, f, &view);
        let mut out = Consumed::default();
        let mut scratch;
        let h2 = if remove {
            &mut f.bag
        } else {
            scratch = before.clone();
            &mut scratch
        };
        self.consume_all(&cx, es, h2, &mut out).map_err(|s| s.in_assertion(ctx, f.member))?;
        Ok(out)
    }

    /// Run a method or constructor body from its entry state, then consume its
    /// postcondition (with `result` bound); returns the result and the consumed
    /// postcondition's permissions.
    pub fn run_body(&mut self, f: &mut Frame) -> R<(Value, Bag)> {
        let Some(m) = self.member(f.member) else {
            return Err(Stop::Fail(super::Failure {
                id: "internal.error",
                reason: "internal.error",
                span: Span::default(),
                member: f.member,
                message: "no such member".into(),
            }));
        };
        let Body::Block(b) = &m.body else {
            // An interface's method (no body): bound at run time to a class's.
            return Err(Stop::Rejected(UNDISPATCHED.into()));
        };
        let result = match self.exec_block(f, &b.stmts)? {
            Flow::Return(Some(v)) => v,
            _ => match m.kind {
                MemberKind::Constructor => f.locals.get("this").cloned().unwrap_or(Value::Null),
                _ => Value::default_of(&m.ty),
            },
        };
        // The postcondition sees the parameters as passed, and `result`.
        let mut post = f.entry.clone();
        if m.ty != Type::Void {
            post.insert("result".into(), result.clone());
        }
        std::mem::swap(&mut f.locals, &mut post);
        let ctx = Ctx { id: "postcondition.violated", call: None };
        let got = self.consume_in_frame(f, &m.ensures, ctx, true);
        std::mem::swap(&mut f.locals, &mut post);
        Ok((result, got?.bag))
    }

    fn exec_block(&mut self, f: &mut Frame, stmts: &'p [Stmt]) -> R<Flow> {
        for st in stmts {
            if let Flow::Return(v) = self.exec(f, st)? {
                return Ok(Flow::Return(v));
            }
        }
        Ok(Flow::Normal)
    }

    fn exec(&mut self, f: &mut Frame, st: &'p Stmt) -> R<Flow> {
        self.tick()?;
        let _g = self.enter()?;
        let member = f.member;
        grow(|| self.exec_kind(f, st)).map_err(|s| s.in_stmt(member))
    }

    fn exec_kind(&mut self, f: &mut Frame, st: &'p Stmt) -> R<Flow> {
        match &st.kind {
            StmtKind::Local { ty, name, init } => {
                let v = match init {
                    None => Value::default_of(ty),
                    Some(rhs) => self.rhs(f, rhs)?,
                };
                f.locals.insert(name.name.clone(), v);
            }
            StmtKind::Assign { lhs, rhs } => self.assign(f, lhs, rhs)?,
            StmtKind::Call(e) => {
                self.call(f, e)?;
            }
            StmtKind::If { cond, then, els } => {
                if truth(&self.eval_in_frame(f, cond)?) {
                    return self.exec_block(f, &then.stmts);
                } else if let Some(els) = els {
                    return self.exec(f, els);
                }
            }
            StmtKind::While { cond, invariants, body } => {
                return self.exec_while(f, cond, invariants, &body.stmts);
            }
            StmtKind::Assert(a) => {
                let ctx = Ctx { id: "assert.failed", call: None };
                self.consume_in_frame(f, std::slice::from_ref(a), ctx, false)?;
            }
            StmtKind::Open(call) => {
                let (p, args, pi) = self.ghost_instance(f, call, st.span)?;
                if pi.is_zero() {
                    return Ok(Flow::Normal);
                }
                if f.bag.instance_total(p, &args) < pi {
                    return raw("open.failed", st.span, "no predicate instance to open");
                }
                match f.bag.take_instance(p, &args, &pi) {
                    Some(inst) => f.bag.merge(inst.contents),
                    None => return raw("open.failed", st.span, "no predicate instance to open"),
                }
            }
            StmtKind::Close(call) => {
                let (p, args, pi) = self.ghost_instance(f, call, st.span)?;
                let ctx = Ctx { id: "close.failed", call: Some(st.span) };
                let Some(body) = self.body_of(p) else {
                    return Err(Stop::Rejected(UNDISPATCHED.into()));
                };
                if pi.is_zero() {
                    return Ok(Flow::Normal);
                }
                let locals = self.pred_locals(p, &args);
                let before = f.bag.clone();
                let view = [&before];
                let cx =
                    Cx { heap: &self.heap, view: &view, locals: &locals, old: None, pview: None };
                let mut got = Consumed::default();
                let mode = Mode { scale: pi.clone(), read: false };
                self.consume_in(&cx, body, &mut f.bag, &mut got, &mode)
                    .map_err(|s| s.in_assertion(ctx, f.member))?;
                f.bag.add_instance(super::perm::Instance {
                    pred: p,
                    args,
                    amount: pi,
                    contents: got.bag,
                });
            }
            StmtKind::Use(call) => {
                self.eval_in_frame(f, call)?;
            }
            StmtKind::Join(a) => {
                let ctx = Ctx { id: "join.failed", call: None };
                let got = self.consume_in_frame(f, std::slice::from_ref(a), ctx, true)?;
                // What the join's assertion did not take is dropped.
                f.bag = got.bag;
            }
            StmtKind::Return(None) => return Ok(Flow::Return(None)),
            StmtKind::Return(Some(e)) => {
                let v = if self.is_method_call(e) {
                    self.call(f, e)?
                } else {
                    self.eval_in_frame(f, e)?
                };
                return Ok(Flow::Return(Some(v)));
            }
            StmtKind::Block(b) => return self.exec_block(f, &b.stmts),
        }
        Ok(Flow::Normal)
    }

    /// The instance and amount of `open`/`close`: `e.q(a)` (at `write`) or
    /// `acc(e.q(a), p)`; a null receiver is `receiver.null` at the statement.
    fn ghost_instance(
        &self,
        f: &Frame,
        call: &'p Expr,
        span: Span,
    ) -> R<(MemberRef, Vec<Value>, Rat)> {
        let view = [&f.bag];
        let cx = frame_cx!(self, f, &view);
        let (call, pi) = match &call.kind {
            ExprKind::Frac { acc, amount } => (&**acc, Some(&**amount)),
            _ => (call, None),
        };
        let call = match &call.kind {
            ExprKind::Acc(inner) => &**inner,
            _ => call,
        };
        let (p, args) = self.instance_args(&cx, call, Some(("receiver.null", span)))?;
        let pi = match pi {
            Some(x) => self.amount_of(&cx, x, call)?,
            None => Rat::one(),
        };
        Ok((p, args, pi))
    }

    fn is_method_call(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Call { target: Some(t), .. } => {
                self.member(*t).is_some_and(|m| m.kind == MemberKind::Method)
            }
            _ => false,
        }
    }

    /// `while (c) invariant I; { body }`: the body holds only what `I` gives.
    fn exec_while(
        &mut self,
        f: &mut Frame,
        cond: &'p Expr,
        invs: &'p [Expr],
        body: &'p [Stmt],
    ) -> R<Flow> {
        let established = Ctx { id: "invariant.not.established", call: None };
        let got = self.consume_in_frame(f, invs, established, true)?;
        let outside = std::mem::replace(&mut f.bag, got.bag);
        loop {
            self.tick()?;
            // The body starts from the invariant alone: it must be defined there (its
            // reads framed by its own permissions), as the verifier produces it there.
            self.framed_in_frame(f, invs)?;
            let c = self.eval_in_frame(f, cond).map_err(|s| s.in_stmt(f.member))?;
            if !truth(&c) {
                break;
            }
            if let Flow::Return(v) = self.exec_block(f, body)? {
                f.bag.merge(outside);
                return Ok(Flow::Return(v));
            }
            let preserved = Ctx { id: "invariant.not.preserved", call: None };
            let got = self.consume_in_frame(f, invs, preserved, true)?;
            // What the invariant did not take is dropped, as the verifier drops it.
            f.bag = got.bag;
        }
        f.bag.merge(outside);
        Ok(Flow::Normal)
    }

    /// Evaluate assertions in the frame's own bag (without removing anything); a
    /// failure to read or call is the statement's.
    fn framed_in_frame(&self, f: &Frame, es: &'p [Expr]) -> R<()> {
        let view = [&f.bag];
        let cx = frame_cx!(self, f, &view);
        self.check_all(&cx, es).map(|_| ()).map_err(|s| s.in_stmt(f.member))
    }

    fn assign(&mut self, f: &mut Frame, lhs: &'p Expr, rhs: &'p Rhs) -> R<()> {
        match &lhs.kind {
            ExprKind::Local(x) | ExprKind::Name(x) => {
                let v = self.rhs(f, rhs)?;
                f.locals.insert(x.clone(), v);
                Ok(())
            }
            ExprKind::Field { recv, field, class } => {
                let r = self.eval_in_frame(f, recv)?;
                let v = self.rhs(f, rhs)?;
                let loc = self.field_loc(&r, *class, &field.name, lhs)?;
                let Loc::Field(o, slot) = loc else { return Ok(()) };
                if !f.bag.make_whole(loc) {
                    return raw(
                        "insufficient.permission",
                        lhs.span,
                        format!(
                            "no permission to write `{}` (held at {}, a write needs write)",
                            self.field_name(o, slot, &self.heap.objects),
                            f.bag.total(loc)
                        ),
                    );
                }
                self.heap.set(o, slot, v);
                Ok(())
            }
            ExprKind::Index { arr, idx } => {
                let a = self.eval_in_frame(f, arr)?;
                let i = match self.eval_in_frame(f, idx)? {
                    Value::Int(n) => n,
                    _ => Default::default(),
                };
                let v = self.rhs(f, rhs)?;
                let Value::Ref(o) = a else {
                    return raw("insufficient.permission", lhs.span, "the array is null");
                };
                let n = self.heap.len_of(o).unwrap_or(0);
                let whole = i
                    .to_usize()
                    .filter(|&k| k < n)
                    .is_some_and(|k| f.bag.direct(Loc::Elem(o, k)) == Rat::one());
                if !whole && n > 0 && !(0..n).any(|k| f.bag.holds(Loc::Elem(o, k))) {
                    return raw(
                        "insufficient.permission",
                        lhs.span,
                        "no permission to any of the array's elements",
                    );
                }
                let Some(k) = i.to_usize().filter(|&k| k < n) else {
                    return raw(
                        "index.out.of.bounds",
                        lhs.span,
                        format!("index {i} is out of bounds for length {n}"),
                    );
                };
                if !f.bag.make_whole(Loc::Elem(o, k)) {
                    return raw(
                        "insufficient.permission",
                        lhs.span,
                        format!(
                            "no permission to write element {k} (held at {}, a write needs write)",
                            f.bag.total(Loc::Elem(o, k))
                        ),
                    );
                }
                self.heap.set(o, k, v);
                Ok(())
            }
            _ => raw("internal.error", lhs.span, "assignment to a non-location"),
        }
    }

    fn rhs(&mut self, f: &mut Frame, rhs: &'p Rhs) -> R<Value> {
        match rhs {
            Rhs::Expr(e) if self.is_method_call(e) => self.call(f, e),
            Rhs::Expr(e) => self.eval_in_frame(f, e),
            Rhs::NewArray { elem, len, span } => {
                let n = match self.eval_in_frame(f, len)? {
                    Value::Int(n) => n,
                    _ => Default::default(),
                };
                if negative(&n) {
                    return raw("index.out.of.bounds", *span, format!("negative array length {n}"));
                }
                let n = match n.to_usize() {
                    Some(n) if n <= self.limits.max_array => n,
                    _ => return Err(Stop::OutOfSteps),
                };
                // Allocation costs a step per element, so loops cannot exhaust memory.
                self.tick_n(n as u64)?;
                let o = self.heap.alloc(Object {
                    kind: ObjKind::Array(elem.clone()),
                    slots: vec![Value::default_of(elem); n],
                });
                for k in 0..n {
                    f.bag.add(Loc::Elem(o, k), &Rat::one());
                }
                Ok(Value::Ref(o))
            }
            Rhs::New { class, args, span } => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.eval_in_frame(f, a)?);
                }
                let Some(&ci) = self.layout.class_index.get(&class.name) else {
                    // `new Object()`
                    let o = self.heap.alloc(Object { kind: ObjKind::Class(None), slots: vec![] });
                    return Ok(Value::Ref(o));
                };
                let o = self.heap.alloc(self.layout.new_object(ci));
                let mut fields = Bag::default();
                for slot in 0..self.layout.field_types[ci].len() {
                    fields.add(Loc::Field(o, slot), &Rat::one());
                }
                match self.layout.ctor[ci] {
                    Some(mi) => {
                        let target = MemberRef { class: ci, member: mi };
                        self.invoke(f, target, Some(Value::Ref(o)), vals, *span, fields)?;
                    }
                    None => f.bag.merge(fields),
                }
                Ok(Value::Ref(o))
            }
        }
    }

    /// A call in code: a pure method is evaluated; a method is invoked.
    fn call(&mut self, f: &mut Frame, e: &'p Expr) -> R<Value> {
        let ExprKind::Call { recv, args, target: Some(t), .. } = &e.kind else {
            return raw("internal.error", e.span, "not a call");
        };
        if !self.is_method_call(e) {
            return self.eval_in_frame(f, e);
        }
        let (this, vals) = {
            let view = [&f.bag];
            let cx = frame_cx!(self, f, &view);
            let this = self.receiver(&cx, recv, e)?;
            let mut vals = Vec::with_capacity(args.len());
            for a in args {
                vals.push(self.eval(&cx, a)?);
            }
            (this, vals)
        };
        self.invoke(f, *t, this, vals, e.span, Bag::default())
    }

    /// Invoke a method or constructor: consume its precondition from the caller
    /// (`call.precondition` at `span`), run it with those permissions plus `extra`,
    /// and give the caller its postcondition's permissions.
    fn invoke(
        &mut self,
        caller: &mut Frame,
        target: MemberRef,
        this: Option<Value>,
        args: Vec<Value>,
        span: Span,
        extra: Bag,
    ) -> R<Value> {
        let _g = self.enter()?;
        let Some(m) = self.member(target) else {
            return raw("internal.error", span, "no such member");
        };
        let locals = self.callee_locals(target, this.clone(), &args);
        let got = {
            let before = caller.bag.clone();
            let view = [&before];
            let cx = Cx { heap: &self.heap, view: &view, locals: &locals, old: None, pview: None };
            let mut out = Consumed::default();
            let ctx = Ctx { id: "call.precondition", call: Some(span) };
            self.consume_all(&cx, &m.requires, &mut caller.bag, &mut out)
                .map_err(|s| s.in_assertion(ctx, caller.member))?;
            out
        };
        if self.is_abstract(target) {
            let (result, back) =
                grow(|| self.invoke_dispatched(m, target, this, args, locals, got.bag))?;
            caller.bag.merge(back);
            return Ok(result);
        }
        let mut bag = got.bag;
        bag.merge(extra);
        let old = if self.needs_old(target) {
            Some(Rc::new(Old { heap: self.heap.clone(), bag: bag.clone() }))
        } else {
            None
        };
        let mut callee = Frame { member: target, entry: locals.clone(), locals, bag, old };
        let (result, back) = grow(|| self.run_body(&mut callee))?;
        caller.bag.merge(back);
        Ok(result)
    }

    /// A dynamically bound call of the interface method `im` (LANGUAGE.md section 10),
    /// whose precondition gave `given`: the receiver's class's method runs from what
    /// its own precondition takes of `given`; the interface's postcondition is then
    /// consumed from what it gave back and the rest of `given`. A failure of either
    /// step is the class method's `override.unsound` (it does not refine `im`).
    fn invoke_dispatched(
        &mut self,
        im: &'p crate::syntax::ast::Member,
        target: MemberRef,
        this: Option<Value>,
        args: Vec<Value>,
        ilocals: super::Locals,
        given: Bag,
    ) -> R<(Value, Bag)> {
        let Some(cm) = self.dispatch(&self.heap, target, this.as_ref()) else {
            return Err(Stop::Rejected(UNDISPATCHED.into()));
        };
        let Some(m) = self.member(cm) else {
            return Err(Stop::Rejected(UNDISPATCHED.into()));
        };
        let entry = Rc::new(Old { heap: self.heap.clone(), bag: given.clone() });
        let locals = self.callee_locals(cm, this, &args);
        let mut rest = given.clone();
        let got = {
            let view = [&given];
            let cx = Cx { heap: &self.heap, view: &view, locals: &locals, old: None, pview: None };
            let mut out = Consumed::default();
            let ctx = Ctx { id: "override.unsound", call: None };
            self.consume_all(&cx, &m.requires, &mut rest, &mut out)
                .map_err(|s| s.in_assertion(ctx, cm))?;
            out
        };
        let old = if self.needs_old(cm) {
            Some(Rc::new(Old { heap: self.heap.clone(), bag: got.bag.clone() }))
        } else {
            None
        };
        let mut callee = Frame { member: cm, entry: locals.clone(), locals, bag: got.bag, old };
        let (result, back) = grow(|| self.run_body(&mut callee))?;
        rest.merge(back);
        let mut post = ilocals;
        if im.ty != Type::Void {
            post.insert("result".into(), result.clone());
        }
        let before = rest.clone();
        let view = [&before];
        let cx =
            Cx { heap: &self.heap, view: &view, locals: &post, old: Some(&entry), pview: None };
        let mut out = Consumed::default();
        let ctx = Ctx { id: "override.unsound", call: None };
        self.consume_all(&cx, &im.ensures, &mut rest, &mut out)
            .map_err(|s| s.in_assertion(ctx, cm))?;
        Ok((result, out.bag))
    }
}
