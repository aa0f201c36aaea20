#!/usr/bin/env python3
"""Writes the Visitor workload (LANGUAGE.md section 10; the paper's section 6) as .jv
for idf-verify and as .vpr for Viper's Silicon, with the same meaning.

  visitor_workload.py OUTDIR N     # visitor_N.jv and visitor_N.vpr

The program declares the interfaces `Tree` and `Visitor` of examples/visitor.jv, two
tree classes and a summing visitor, then builds a tree of N objects (about N/2 leaves
and N/2 inner nodes) in straight-line code, runs the visitor over it through the
interface, and checks that the tree's size is unchanged.

Viper has no interfaces, so the .vpr encodes them as VeriFast-style predicate families
do: an abstract predicate `valid(this)` whose body cases on an uninterpreted class
function `cls(this)`, a pure method through an interface as a function whose value is
the class's on objects of that class, and a dynamically bound method as a method with
the interface's contract (each class's implementation is a method verified against
that same contract, which is what refinement asks of a member with no contract of its
own).
"""
import os
import sys

JV_HEADER = """\
interface Visitor {
  predicate inv();
  void visitLeaf(Leaf l)
    requires inv() && l.valid();
    ensures inv() && l.valid() && l.get() == old(l.get());
  void visitNode(Node n)
    requires inv() && n.valid();
    ensures inv() && n.valid() && n.size() == old(n.size());
}

interface Tree {
  predicate valid();
  pure int size() requires valid(); ensures result >= 1;
  void accept(Visitor v)
    requires valid() && v.inv();
    ensures valid() && v.inv() && size() == old(size());
}

class Leaf implements Tree {
  int val;
  predicate valid() { return acc(val); }
  pure int get() requires valid(); { return opening valid() in val; }
  pure int size() requires valid(); ensures result >= 1; { return 1; }
  void accept(Visitor v) { v.visitLeaf(this); }
  Leaf(int x) ensures valid() && get() == x; { val = x; }
}

class Node implements Tree {
  Tree left;
  Tree right;
  predicate valid() {
    return acc(left) && acc(right) && left != null && right != null && left.valid() && right.valid();
  }
  pure int size() requires valid(); ensures result >= 1; {
    return opening valid() in 1 + left.size() + right.size();
  }
  void accept(Visitor v) { v.visitNode(this); }
  Node(Tree l, Tree r)
    requires l != null && r != null && l.valid() && r.valid();
    ensures valid() && size() == 1 + old(l.size()) + old(r.size());
  {
    left = l;
    right = r;
  }
}

class SumVisitor implements Visitor {
  int sum;
  predicate inv() { return acc(sum); }
  pure int total() requires inv(); { return opening inv() in sum; }
  SumVisitor() ensures inv() && total() == 0; { }
  void visitLeaf(Leaf l) { sum = sum + l.get(); }
  void visitNode(Node n) {
    n.left.accept(this);
    n.right.accept(this);
  }
}
"""

VPR_HEADER = """\
// Classes as constants of an uninterpreted class function (the encoding of
// predicate families and dynamic dispatch).
domain Classes {
  function cls(r: Ref): Int
}
field val: Int
field left: Ref
field right: Ref
field sum: Int

// Tree.valid as a family: Leaf's body for objects of class 1, Node's for class 2.
predicate valid(this: Ref) {
  (cls(this) == 1 ==> acc(this.val)) &&
  (cls(this) == 2 ==> acc(this.left) && acc(this.right) && this.left != null &&
     this.right != null && valid(this.left) && valid(this.right))
}
// Visitor.inv for the one visitor class (3).
predicate inv(this: Ref) { cls(this) == 3 ==> acc(this.sum) }

function get(this: Ref): Int
  requires cls(this) == 1 && valid(this)
{ unfolding valid(this) in this.val }

// Tree.size through the interface: the class's body on each class.
function size(this: Ref): Int
  requires valid(this)
  ensures result >= 1
{
  cls(this) == 2 ? (unfolding valid(this) in 1 + size(this.left) + size(this.right)) : 1
}

method newLeaf(x: Int) returns (this: Ref)
  ensures this != null && cls(this) == 1 && valid(this) && get(this) == x
{
  this := new(val)
  assume cls(this) == 1
  this.val := x
  fold valid(this)
}

method newNode(l: Ref, r: Ref) returns (this: Ref)
  requires l != null && r != null && valid(l) && valid(r)
  ensures this != null && cls(this) == 2 && valid(this) && size(this) == 1 + old(size(l)) + old(size(r))
{
  this := new(left, right)
  assume cls(this) == 2
  this.left := l
  this.right := r
  fold valid(this)
}

method newSum() returns (this: Ref)
  ensures this != null && cls(this) == 3 && inv(this)
{
  this := new(sum)
  assume cls(this) == 3
  this.sum := 0
  fold inv(this)
}

// Tree.accept and Visitor.visitLeaf / visitNode: the interfaces' contracts.
method accept(this: Ref, v: Ref)
  requires valid(this) && inv(v)
  ensures valid(this) && inv(v) && size(this) == old(size(this))

method visitLeaf(this: Ref, l: Ref)
  requires inv(this) && cls(l) == 1 && valid(l)
  ensures inv(this) && valid(l) && get(l) == old(get(l))

method visitNode(this: Ref, n: Ref)
  requires inv(this) && cls(n) == 2 && valid(n)
  ensures inv(this) && valid(n) && size(n) == old(size(n))

// The implementations, each against its interface's contract.
method Leaf_accept(this: Ref, v: Ref)
  requires cls(this) == 1 && valid(this) && inv(v)
  ensures valid(this) && inv(v) && size(this) == old(size(this))
{ visitLeaf(v, this) }

method Node_accept(this: Ref, v: Ref)
  requires cls(this) == 2 && valid(this) && inv(v)
  ensures valid(this) && inv(v) && size(this) == old(size(this))
{ visitNode(v, this) }

method Sum_visitLeaf(this: Ref, l: Ref)
  requires cls(this) == 3 && inv(this) && cls(l) == 1 && valid(l)
  ensures inv(this) && valid(l) && get(l) == old(get(l))
{
  unfold inv(this)
  this.sum := this.sum + get(l)
  fold inv(this)
}

method Sum_visitNode(this: Ref, n: Ref)
  requires cls(this) == 3 && inv(this) && cls(n) == 2 && valid(n)
  ensures inv(this) && valid(n) && size(n) == old(size(n))
{
  unfold valid(n)
  accept(n.left, this)
  accept(n.right, this)
  fold valid(n)
}
"""


def visitor(n):
    """The workload with about n objects in the tree."""
    leaves = max(1, (n + 1) // 2)
    jv = [JV_HEADER, "class Client {", "  static void main() {"]
    vpr = [VPR_HEADER, "method main() {"]
    items = []
    for i in range(1, leaves + 1):
        jv.append(f"    Leaf l{i} = new Leaf({i});")
        vpr += [f"  var l{i}: Ref", f"  l{i} := newLeaf({i})"]
        items.append((f"l{i}", 1))
    k = 0
    while len(items) > 1:
        nxt = []
        for j in range(0, len(items) - 1, 2):
            k += 1
            (a, sa), (b, sb) = items[j], items[j + 1]
            jv.append(f"    Node n{k} = new Node({a}, {b});")
            vpr += [f"  var n{k}: Ref", f"  n{k} := newNode({a}, {b})"]
            nxt.append((f"n{k}", 1 + sa + sb))
        if len(items) % 2:
            nxt.append(items[-1])
        items = nxt
    root, size = items[0]
    jv += [f"    Tree t = {root};",
           "    SumVisitor v = new SumVisitor();",
           "    t.accept(v);",
           f"    assert t.size() == {size};",
           "  }", "}"]
    vpr += ["  var v: Ref", "  v := newSum()",
            f"  accept({root}, v)",
            f"  assert size({root}) == {size}",
            "}"]
    return jv, vpr


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    out, n = sys.argv[1], int(sys.argv[2])
    os.makedirs(out, exist_ok=True)
    jv, vpr = visitor(n)
    for ext, lines in (("jv", jv), ("vpr", vpr)):
        with open(os.path.join(out, f"visitor_{n}.{ext}"), "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
