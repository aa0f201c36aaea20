#!/usr/bin/env python3
"""Scalable workloads for LANGUAGE.md sections 11-15 (fractions, array segments and
quantified permissions, value quantifiers, sequences), written as .jv for idf-verify
and as .vpr for Viper's Silicon with the same meaning (the encodings follow
../shared/peers/suite/22_*.vpr to 25_*.vpr).

  feature_workloads.py OUTDIR                 # every family at its default sizes
  feature_workloads.py OUTDIR halfread 100    # one family at one size

OUTDIR must be a folder outside the repository (nothing generated is committed).

Families (N is the size; every program must verify):
  halfread N  one cell and N calls of a reader that takes acc(c.x, 1/2) and gives it
              back; after each call the caller, which kept the other half, asserts the
              value is unchanged, then writes the cell (the halves summed to write).
  dcfill N    a method over a segment [lo, hi) of an array, holding
              `forall int i :: lo <= i && i < hi ==> acc(a[i])`, that splits at mid and
              calls itself on both halves, setting every element to 0 (and proving
              it); N clients, client k holding acc(a[*]) of a (k+1)-element array,
              zeroing its two halves and proving the whole array is 0.
  qpread N    N methods, each a loop over a segment holding the quantified read
              permission `acc(a[i], 1/2)`: a sum with a lower bound (even methods) or a
              search with its "not found" quantifier (odd ones); each has a client that
              holds acc(a[*]), calls it, and proves the values were left alone.
  bsearch N   N binary searches over a sorted array (a quantified sortedness
              precondition, read permission to the whole array), each with a client
              that builds a sorted 3-element array and proves what the search found.
  sortedins N a sorted linked list specified by its contents (a pure `seq<int>
              contents()` whose postcondition says the contents are sorted): insert
              returns the index where the value went and its postcondition is the
              equation `contents() == old(contents())[..result] + seq(v) +
              old(contents())[result..]`; N clients, each making three inserts behind a
              sentinel head and proving length, first element, membership of the
              value and sortedness.
  seqbuild N  a sequence built by N straight-line appends, each followed by an
              assertion about its length and last element, and one loop building
              the same sequence with a quantified invariant.

Two more families are single methods that grow with N (sizes 5, 10, 20 by default):
  dcchain N     dcfill's method, one client holding acc(a[*]) of an N-element array
                that calls it on the N consecutive one-element segments and proves
                the whole array is 0 (N + 1 array chunks at the end).
  sortedchain N sortedins' list, one client making N inserts into one list and
                checking length, first element and sortedness after each.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from elseif_workload import check_out  # noqa: E402  (the same output-folder rules)

SIZES = [10, 100, 1000]

# Arrays in Viper as in ../shared/peers/suite/23_array_segments.vpr: element i of a is
# loc(a, i).ival (loc injective), a.length is alen(a), every index goes through aidx,
# whose precondition is .jv's bounds check.
VPR_ARRAYS = [
    "domain ArrayDom {",
    "  function loc(a: Ref, i: Int): Ref",
    "  function len(a: Ref): Int",
    "  function loc_arr(r: Ref): Ref",
    "  function loc_idx(r: Ref): Int",
    "  axiom loc_inj { forall a: Ref, i: Int :: {loc(a, i)} loc_arr(loc(a, i)) == a && loc_idx(loc(a, i)) == i }",
    "  axiom len_nonneg { forall a: Ref :: {len(a)} len(a) >= 0 }",
    "}",
    "field ival: Int",
    "function alen(a: Ref): Int requires a != null { len(a) }",
    "function aidx(a: Ref, i: Int): Int requires 0 <= i && i < len(a) { i }",
    "define A(a, i) loc(a, aidx(a, i)).ival",
    "define SEG(a, lo, hi, p) forall i_: Int :: {loc(a, i_)} lo <= i_ && i_ < hi ==> acc(loc(a, aidx(a, i_)).ival, p)",
    "define ALL(a, p) a != null && SEG(a, 0, alen(a), p)",
    "method new_int_array(n: Int) returns (a: Ref)",
    "  requires n >= 0",
    "  ensures a != null && alen(a) == n && ALL(a, write)",
    "  ensures forall i: Int :: {loc(a, i)} 0 <= i && i < n ==> A(a, i) == 0",
]


def halfread(n):
    jv = ["class Cell {", "  int x;",
          "  static int read(Cell c)",
          "    requires acc(c.x, 1/2);",
          "    ensures acc(c.x, 1/2) && result == c.x;",
          "  { return c.x; }",
          "  static void main() {",
          "    Cell c = new Cell();"]
    vpr = ["field x: Int",
           "method read(c: Ref) returns (r: Int)",
           "  requires acc(c.x, 1/2)",
           "  ensures acc(c.x, 1/2) && r == c.x",
           "{ r := c.x }",
           "method main() {",
           "  var c: Ref",
           "  c := new(x)",
           "  c.x := 0"]
    for i in range(1, n + 1):
        jv += [f"    int r{i} = read(c);", f"    assert r{i} == {i - 1} && c.x == {i - 1};", f"    c.x = {i};"]
        vpr += [f"  var r{i}: Int", f"  r{i} := read(c)", f"  assert r{i} == {i - 1} && c.x == {i - 1}",
                f"  c.x := {i}"]
    jv += [f"    assert c.x == {n};", "  }", "}"]
    vpr += [f"  assert c.x == {n}", "}"]
    return jv, vpr


def dcchain(n):
    seg = "forall int i :: lo <= i && i < hi ==> acc(a[i])"
    jv = ["class Seg {",
          "  static void zero(int[] a, int lo, int hi)",
          "    requires a != null && 0 <= lo && lo <= hi && hi <= a.length;",
          f"    requires {seg};",
          f"    ensures {seg};",
          "    ensures forall int i :: lo <= i && i < hi ==> a[i] == 0;",
          "  {",
          "    if (hi - lo == 1) {",
          "      a[lo] = 0;",
          "    } else if (hi - lo > 1) {",
          "      int mid = lo + (hi - lo) / 2;",
          "      zero(a, lo, mid);",
          "      zero(a, mid, hi);",
          "    }",
          "  }",
          "  static void client(int[] a)",
          f"    requires acc(a[*]) && a.length == {n};",
          "    ensures acc(a[*]) && (forall int i :: 0 <= i && i < a.length ==> a[i] == 0);",
          "  {"]
    vpr = VPR_ARRAYS + [
        "method zero(a: Ref, lo: Int, hi: Int)",
        "  requires a != null && 0 <= lo && lo <= hi && hi <= alen(a)",
        "  requires SEG(a, lo, hi, write)",
        "  ensures SEG(a, lo, hi, write)",
        "  ensures forall i: Int :: {loc(a, i)} lo <= i && i < hi ==> A(a, i) == 0",
        "{",
        "  if (hi - lo == 1) {",
        "    A(a, lo) := 0",
        "  } elseif (hi - lo > 1) {",
        "    var mid: Int := lo + (hi - lo) \\ 2",
        "    zero(a, lo, mid)",
        "    zero(a, mid, hi)",
        "  }",
        "}",
        "method client(a: Ref)",
        f"  requires ALL(a, write) && alen(a) == {n}",
        "  ensures ALL(a, write)",
        "  ensures forall i: Int :: {loc(a, i)} 0 <= i && i < alen(a) ==> A(a, i) == 0",
        "{"]
    for i in range(n):
        jv.append(f"    zero(a, {i}, {i + 1});")
        vpr.append(f"  zero(a, {i}, {i + 1})")
    jv += ["  }", "}"]
    vpr += ["}"]
    return jv, vpr


def dcfill(n):
    """N call sites of the divide-and-conquer method: client k holds acc(a[*]) of an array
    of k + 1 elements, zeroes its two halves with two calls, and proves the whole array
    is 0; the work grows linearly with N."""
    jv, vpr = dcchain(0)
    jv, vpr = jv[:jv.index("  static void client(int[] a)")], vpr[:vpr.index("method client(a: Ref)")]
    for k in range(n):
        jv += [f"  static void client{k}(int[] a)",
               f"    requires acc(a[*]) && a.length == {k + 1};",
               "    ensures acc(a[*]) && (forall int i :: 0 <= i && i < a.length ==> a[i] == 0);",
               "  {",
               "    int mid = a.length / 2;",
               "    zero(a, 0, mid);",
               "    zero(a, mid, a.length);",
               "  }"]
        vpr += [f"method client{k}(a: Ref)",
                f"  requires ALL(a, write) && alen(a) == {k + 1}",
                "  ensures ALL(a, write)",
                "  ensures forall i: Int :: {loc(a, i)} 0 <= i && i < alen(a) ==> A(a, i) == 0",
                "{",
                "  var mid: Int := alen(a) \\ 2",
                "  zero(a, 0, mid)",
                "  zero(a, mid, alen(a))",
                "}"]
    jv += ["}"]
    return jv, vpr


def qpread(n):
    half = "forall int i :: lo <= i && i < hi ==> acc(a[i], 1/2)"
    vhalf = "SEG(a, lo, hi, 1/2)"
    jv = ["class Readers {"]
    vpr = list(VPR_ARRAYS)
    for k in range(n):
        if k % 2 == 0:
            jv += [f"  static int sum{k}(int[] a, int lo, int hi)",
                   "    requires a != null && 0 <= lo && lo <= hi && hi <= a.length;",
                   f"    requires {half};",
                   f"    requires forall int i :: lo <= i && i < hi ==> a[i] >= {k};",
                   f"    ensures {half};",
                   f"    ensures result >= {k} * (hi - lo);",
                   "  {",
                   "    int s = 0;",
                   "    int j = lo;",
                   "    while (j < hi)",
                   "      invariant lo <= j && j <= hi;",
                   f"      invariant {half};",
                   f"      invariant forall int i :: lo <= i && i < hi ==> a[i] >= {k};",
                   f"      invariant s >= {k} * (j - lo);",
                   "    {",
                   "      s = s + a[j];",
                   "      j = j + 1;",
                   "    }",
                   "    return s;",
                   "  }",
                   f"  static void use{k}(int[] a)",
                   f"    requires acc(a[*]) && a.length > 0 && (forall int i :: 0 <= i && i < a.length ==> a[i] >= {k});",
                   f"    ensures acc(a[*]) && a[0] >= {k};",
                   "  {",
                   f"    int s = sum{k}(a, 0, a.length);",
                   f"    assert s >= {k} * a.length;",
                   "  }"]
            vpr += [f"method sum{k}(a: Ref, lo: Int, hi: Int) returns (s: Int)",
                    "  requires a != null && 0 <= lo && lo <= hi && hi <= alen(a)",
                    f"  requires {vhalf}",
                    f"  requires forall i: Int :: {{loc(a, i)}} lo <= i && i < hi ==> A(a, i) >= {k}",
                    f"  ensures {vhalf}",
                    f"  ensures s >= {k} * (hi - lo)",
                    "{",
                    "  s := 0",
                    "  var j: Int := lo",
                    "  while (j < hi)",
                    "    invariant lo <= j && j <= hi",
                    f"    invariant {vhalf}",
                    f"    invariant forall i: Int :: {{loc(a, i)}} lo <= i && i < hi ==> A(a, i) >= {k}",
                    f"    invariant s >= {k} * (j - lo)",
                    "  {",
                    "    s := s + A(a, j)",
                    "    j := j + 1",
                    "  }",
                    "}",
                    f"method use{k}(a: Ref)",
                    f"  requires ALL(a, write) && alen(a) > 0",
                    f"  requires forall i: Int :: {{loc(a, i)}} 0 <= i && i < alen(a) ==> A(a, i) >= {k}",
                    f"  ensures ALL(a, write) && A(a, 0) >= {k}",
                    "{",
                    "  var s: Int",
                    f"  s := sum{k}(a, 0, alen(a))",
                    f"  assert s >= {k} * alen(a)",
                    "}"]
        else:
            jv += [f"  static int find{k}(int[] a, int lo, int hi)",
                   "    requires a != null && 0 <= lo && lo <= hi && hi <= a.length;",
                   f"    requires {half};",
                   f"    ensures {half};",
                   "    ensures result == -1 || (lo <= result && result < hi);",
                   f"    ensures result >= 0 ==> a[result] == {k};",
                   f"    ensures result == -1 ==> (forall int i :: lo <= i && i < hi ==> a[i] != {k});",
                   "  {",
                   "    int j = lo;",
                   f"    while (j < hi && a[j] != {k})",
                   "      invariant lo <= j && j <= hi;",
                   f"      invariant {half};",
                   f"      invariant forall int i :: lo <= i && i < j ==> a[i] != {k};",
                   "    {",
                   "      j = j + 1;",
                   "    }",
                   "    if (j == hi) { return -1; }",
                   "    return j;",
                   "  }",
                   f"  static void use{k}(int[] a)",
                   f"    requires acc(a[*]) && a.length > 1 && a[1] == {k};",
                   f"    ensures acc(a[*]) && a[1] == {k};",
                   "  {",
                   f"    int r = find{k}(a, 0, a.length);",
                   f"    assert a[1] == {k};",
                   f"    assert r >= 0 && a[r] == {k};",
                   "  }"]
            vpr += [f"method find{k}(a: Ref, lo: Int, hi: Int) returns (r: Int)",
                    "  requires a != null && 0 <= lo && lo <= hi && hi <= alen(a)",
                    f"  requires {vhalf}",
                    f"  ensures {vhalf}",
                    "  ensures r == -1 || (lo <= r && r < hi)",
                    f"  ensures r >= 0 ==> A(a, r) == {k}",
                    f"  ensures r == -1 ==> (forall i: Int :: {{loc(a, i)}} lo <= i && i < hi ==> A(a, i) != {k})",
                    "{",
                    "  var j: Int := lo",
                    f"  while (j < hi && A(a, j) != {k})",
                    "    invariant lo <= j && j <= hi",
                    f"    invariant {vhalf}",
                    f"    invariant forall i: Int :: {{loc(a, i)}} lo <= i && i < j ==> A(a, i) != {k}",
                    "  {",
                    "    j := j + 1",
                    "  }",
                    "  if (j == hi) { r := -1 } else { r := j }",
                    "}",
                    f"method use{k}(a: Ref)",
                    f"  requires ALL(a, write) && alen(a) > 1 && A(a, 1) == {k}",
                    f"  ensures ALL(a, write) && A(a, 1) == {k}",
                    "{",
                    "  var r: Int",
                    f"  r := find{k}(a, 0, alen(a))",
                    f"  assert A(a, 1) == {k}",
                    f"  assert r >= 0 && A(a, r) == {k}",
                    "}"]
    jv += ["}"]
    return jv, vpr


# Whole arrays in Viper as in ../shared/peers/suite/24_quantifiers.vpr: an int[] is a Ref
# with the heap-independent length len(a) and one Seq[Int] field, so acc(a[*], p) is
# acc(a.int_elems, p) with |a.int_elems| == len(a) (bsearch holds whole arrays only).
VPR_SEQ_ARRAYS = [
    "domain IntArrayLen {",
    "  function len(a: Ref): Int",
    "  axiom len_nonneg { forall a: Ref :: { len(a) } len(a) >= 0 }",
    "}",
    "field int_elems: Seq[Int]",
    "define ACC_INT_ARR(a, p) (acc(a.int_elems, p) && |a.int_elems| == len(a))",
    "method new_int_array(n: Int) returns (a: Ref)",
    "  requires n >= 0",
    "  ensures a != null && len(a) == n && ACC_INT_ARR(a, write)",
    "  ensures forall j: Int :: { a.int_elems[j] } 0 <= j && j < n ==> a.int_elems[j] == 0",
]


def bsearch(n):
    jv = ["class Search {"]
    vpr = list(VPR_SEQ_ARRAYS)
    for k in range(n):
        jv += [f"  static int search{k}(int[] a, int x)",
               "    requires a != null && (forall int i :: 0 <= i && i < a.length ==> acc(a[i], 1/2));",
               "    requires forall int i, int j :: 0 <= i && i < j && j < a.length ==> a[i] <= a[j];",
               "    ensures forall int i :: 0 <= i && i < a.length ==> acc(a[i], 1/2);",
               "    ensures -1 <= result && result < a.length;",
               "    ensures result >= 0 ==> a[result] == x;",
               "    ensures result == -1 ==> (forall int i :: 0 <= i && i < a.length ==> a[i] != x);",
               "  {",
               "    int lo = 0;",
               "    int hi = a.length;",
               "    while (lo < hi)",
               "      invariant 0 <= lo && lo <= hi && hi <= a.length;",
               "      invariant forall int i :: 0 <= i && i < a.length ==> acc(a[i], 1/2);",
               "      invariant forall int i, int j :: 0 <= i && i < j && j < a.length ==> a[i] <= a[j];",
               "      invariant forall int i :: 0 <= i && i < lo ==> a[i] < x;",
               "      invariant forall int i :: hi <= i && i < a.length ==> a[i] > x;",
               "    {",
               "      int mid = lo + (hi - lo) / 2;",
               "      if (a[mid] < x) { lo = mid + 1; }",
               "      else if (a[mid] > x) { hi = mid; }",
               "      else { return mid; }",
               "    }",
               "    return -1;",
               "  }",
               f"  static void client{k}() {{",
               "    int[] a = new int[3];",
               f"    a[0] = {k}; a[1] = {k + 2}; a[2] = {k + 4};",
               f"    int r = search{k}(a, {k + 2});",
               f"    assert a[0] == {k} && a[1] == {k + 2} && a[2] == {k + 4};",
               "    assert r == 1;",
               f"    int s = search{k}(a, {k + 3});",
               "    assert s == -1;",
               "  }"]
        e = "a.int_elems"
        vpr += [f"method search{k}(a: Ref, x: Int) returns (r: Int)",
                "  requires a != null && ACC_INT_ARR(a, 1/2)",
                f"  requires forall i: Int, j: Int :: {{ {e}[i], {e}[j] }} 0 <= i && i < j && j < len(a) ==> {e}[i] <= {e}[j]",
                "  ensures ACC_INT_ARR(a, 1/2)",
                "  ensures -1 <= r && r < len(a)",
                f"  ensures r >= 0 ==> {e}[r] == x",
                f"  ensures r == -1 ==> (forall i: Int :: {{ {e}[i] }} 0 <= i && i < len(a) ==> {e}[i] != x)",
                "{",
                "  var lo: Int := 0",
                "  var hi: Int := len(a)",
                "  r := -1",
                "  while (lo < hi && r == -1)",
                "    invariant 0 <= lo && lo <= hi && hi <= len(a)",
                "    invariant ACC_INT_ARR(a, 1/2)",
                f"    invariant forall i: Int, j: Int :: {{ {e}[i], {e}[j] }} 0 <= i && i < j && j < len(a) ==> {e}[i] <= {e}[j]",
                f"    invariant -1 <= r && r < len(a) && (r >= 0 ==> {e}[r] == x)",
                f"    invariant r == -1 ==> (forall i: Int :: {{ {e}[i] }} 0 <= i && i < lo ==> {e}[i] < x)",
                f"    invariant r == -1 ==> (forall i: Int :: {{ {e}[i] }} hi <= i && i < len(a) ==> {e}[i] > x)",
                "  {",
                "    var mid: Int := lo + (hi - lo) \\ 2",
                f"    if ({e}[mid] < x) {{ lo := mid + 1 }}",
                f"    elseif ({e}[mid] > x) {{ hi := mid }}",
                "    else { r := mid }",
                "  }",
                "}",
                f"method client{k}() {{",
                "  var a: Ref",
                "  a := new_int_array(3)",
                f"  {e} := {e}[0 := {k}]",
                f"  {e} := {e}[1 := {k + 2}]",
                f"  {e} := {e}[2 := {k + 4}]",
                "  var r: Int",
                f"  r := search{k}(a, {k + 2})",
                f"  assert {e}[0] == {k} && {e}[1] == {k + 2} && {e}[2] == {k + 4}",
                "  assert r == 1",
                "  var s: Int",
                f"  s := search{k}(a, {k + 3})",
                "  assert s == -1",
                "}"]
    jv += ["}"]
    return jv, vpr


def sortedchain(n):
    """The list's first node is a sentinel no larger than any inserted value, so insert
    keeps the head and returns the index where v went: its postcondition is the
    contents equation `old(contents())[..result] + seq(v) + old(contents())[result..]`.
    Sortedness is kept by the predicate (each value at most the next node's) and stated
    on the contents by contents()'s postcondition, `sorted(result)`."""
    jv = ["class Node {", "  int val;", "  Node next;",
          "  predicate list() {",
          "    return acc(val) && acc(next) && (next != null ==> next.list() && val <= next.first());",
          "  }",
          "  pure int first() requires list(); { return val; }",
          "  static pure bool sorted(seq<int> s) {",
          "    return forall int i, int j :: 0 <= i && i < j && j < s.length ==> s[i] <= s[j];",
          "  }",
          "  pure seq<int> contents()",
          "    requires list();",
          "    ensures result.length >= 1 && result[0] == first() && sorted(result);",
          "  { return next == null ? seq(val) : seq(val) + next.contents(); }",
          "  Node(int v, Node n)",
          "    requires n != null ==> n.list() && v <= n.first();",
          "    ensures list() && first() == v && contents() == (n == null ? seq(v) : seq(v) + old(n.contents()));",
          "  { val = v; next = n; }",
          "  int insert(int v)",
          "    requires list() && first() <= v;",
          "    ensures list() && first() == old(first());",
          "    ensures 1 <= result && result <= old(contents()).length;",
          "    ensures contents() == old(contents())[..result] + seq(v) + old(contents())[result..];",
          "  {",
          "    if (next == null || v <= next.first()) {",
          "      Node t = new Node(v, next);",
          "      next = t;",
          "      return 1;",
          "    }",
          "    int k = next.insert(v);",
          "    return k + 1;",
          "  }",
          "}",
          "class Client {",
          "  static void main(int seed) {",
          "    Node h = new Node(seed, null);"]
    vpr = ["field val: Int", "field next: Ref",
           "function first(this: Ref): Int",
           "  requires this != null && list(this)",
           "{ unfolding list(this) in this.val }",
           "predicate list(this: Ref) {",
           "  acc(this.val) && acc(this.next) && (this.next != null ==> list(this.next) && this.val <= first(this.next))",
           "}",
           "function sorted(s: Seq[Int]): Bool",
           "{ forall i: Int, j: Int :: {s[i], s[j]} 0 <= i && i < j && j < |s| ==> s[i] <= s[j] }",
           "function contents(this: Ref): Seq[Int]",
           "  requires this != null && list(this)",
           "  ensures |result| >= 1 && result[0] == first(this) && sorted(result)",
           "{ unfolding list(this) in (this.next == null ? Seq(this.val) : Seq(this.val) ++ contents(this.next)) }",
           "method node(v: Int, n: Ref) returns (this: Ref)",
           "  requires n != null ==> list(n) && v <= first(n)",
           "  ensures this != null && list(this) && first(this) == v",
           "  ensures contents(this) == (n == null ? Seq(v) : Seq(v) ++ old(n != null ? contents(n) : Seq[Int]()))",
           "{ this := new(val, next); this.val := v; this.next := n; fold list(this) }",
           "method insert(this: Ref, v: Int) returns (res: Int)",
           "  requires this != null && list(this) && first(this) <= v",
           "  ensures list(this) && first(this) == old(first(this))",
           "  ensures 1 <= res && res <= |old(contents(this))|",
           "  ensures contents(this) == old(contents(this))[..res] ++ Seq(v) ++ old(contents(this))[res..]",
           "{",
           "  unfold list(this)",
           "  if (this.next == null || v <= first(this.next)) {",
           "    var t: Ref",
           "    t := node(v, this.next)",
           "    this.next := t",
           "    fold list(this)",
           "    res := 1",
           "  } else {",
           "    var k: Int",
           "    k := insert(this.next, v)",
           "    fold list(this)",
           "    res := k + 1",
           "  }",
           "}",
           "method main(seed: Int) {",
           "  var h: Ref",
           "  var k: Int",
           "  h := node(seed, null)"]
    for i in range(1, n + 1):
        # values above the sentinel, some smaller than those already in, some larger
        v = f"seed + {i * 7 % 11}"
        jv += [f"    int k{i} = h.insert({v});",
               f"    assert h.contents().length == {i + 1} && h.contents()[0] == seed && Node.sorted(h.contents());"]
        vpr += [f"  k := insert(h, {v})",
                f"  assert |contents(h)| == {i + 1} && contents(h)[0] == seed && sorted(contents(h))"]
    jv += ["  }", "}"]
    vpr += ["}"]
    return jv, vpr


def sortedins(n):
    """N clients of sortedchain's list, each making three inserts into a new list and
    proving, after each, its length, its first element and that it contains the value,
    and at the end that it is sorted; the work grows linearly with N. (Its exact
    contents, `seq(k, k + 2, k + 5, k + 9)`, follow from sortedness and the insert
    equations, but only through instances of `sorted` at indices no term names.)"""
    jv, vpr = sortedchain(0)
    jv, vpr = jv[:jv.index("class Client {")], vpr[:vpr.index("method main(seed: Int) {")]
    jv.append("class Client {")
    for k in range(n):
        # the k-th client inserts above the sentinel in an order that exercises every case
        vals = [k + 5, k + 2, k + 9]
        jv += [f"  static void main{k}() {{",
               f"    Node h = new Node({k}, null);"]
        vpr += [f"method main{k}() {{", "  var h: Ref", "  var k: Int", f"  h := node({k}, null)"]
        for m, v in enumerate(vals):
            jv += [f"    int k{v} = h.insert({v});",
                   f"    assert h.contents().length == {m + 2} && h.contents()[0] == {k} && h.contents().contains({v});"]
            vpr += [f"  k := insert(h, {v})",
                    f"  assert |contents(h)| == {m + 2} && contents(h)[0] == {k} && ({v} in contents(h))"]
        jv += ["    assert Node.sorted(h.contents());", "  }"]
        vpr += ["  assert sorted(contents(h))", "}"]
    jv += ["}"]
    return jv, vpr


def seqbuild(n):
    jv = ["class Build {",
          "  static void loop(int n)",
          "    requires n >= 0;",
          "  {",
          "    seq<int> s = seq<int>();",
          "    int i = 0;",
          "    while (i < n)",
          "      invariant 0 <= i && i <= n && s.length == i;",
          "      invariant forall int k :: 0 <= k && k < i ==> s[k] == 3 * k;",
          "    {",
          "      s = s + seq(3 * i);",
          "      i = i + 1;",
          "    }",
          "    assert s.length == n && (n > 0 ==> s[0] == 0 && s[n - 1] == 3 * n - 3);",
          "  }",
          "  static void straight() {",
          "    seq<int> s = seq<int>();"]
    vpr = ["method loop(n: Int)",
           "  requires n >= 0",
           "{",
           "  var s: Seq[Int] := Seq[Int]()",
           "  var i: Int := 0",
           "  while (i < n)",
           "    invariant 0 <= i && i <= n && |s| == i",
           "    invariant forall k: Int :: {s[k]} 0 <= k && k < i ==> s[k] == 3 * k",
           "  {",
           "    s := s ++ Seq(3 * i)",
           "    i := i + 1",
           "  }",
           "  assert |s| == n && (n > 0 ==> s[0] == 0 && s[n - 1] == 3 * n - 3)",
           "}",
           "method straight() {",
           "  var s: Seq[Int] := Seq[Int]()"]
    for i in range(n):
        jv += [f"    s = s + seq({3 * i});", f"    assert s.length == {i + 1} && s[{i}] == {3 * i};"]
        vpr += [f"  s := s ++ Seq({3 * i})", f"  assert |s| == {i + 1} && s[{i}] == {3 * i}"]
    jv += [f"    assert s[0] == 0 && s[{n // 2}] == {3 * (n // 2)};", "  }", "}"]
    vpr += [f"  assert s[0] == 0 && s[{n // 2}] == {3 * (n // 2)}", "}"]
    return jv, vpr


FAMILIES = {"halfread": halfread, "dcfill": dcfill, "qpread": qpread, "bsearch": bsearch,
            "sortedins": sortedins, "seqbuild": seqbuild, "dcchain": dcchain, "sortedchain": sortedchain}
# The default sizes of each family (the two chains grow faster than linearly).
FAMILY_SIZES = {fam: SIZES for fam in FAMILIES}
FAMILY_SIZES.update({"dcchain": [5, 10, 20], "sortedchain": [5, 10, 20]})


def write(out, family, n):
    """Writes FAMILY_N.jv and FAMILY_N.vpr into out; returns their paths."""
    jv, vpr = FAMILIES[family](n)
    paths = []
    for ext, lines in ((".jv", jv), (".vpr", vpr)):
        path = os.path.join(out, f"{family}_{n}{ext}")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        paths.append(path)
    return paths


def size(text):
    n = int(text)
    if n < 1:
        raise argparse.ArgumentTypeError("N must be at least 1")
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir", help="folder for the generated programs, outside the repository")
    ap.add_argument("family", nargs="?", choices=sorted(FAMILIES))
    ap.add_argument("n", nargs="?", type=size)
    args = ap.parse_args()
    if (args.family is None) != (args.n is None):
        ap.error("give both FAMILY and N, or neither")
    if args.outdir in FAMILIES:
        ap.error(f"{args.outdir} is a family name where OUTDIR belongs")
    out = check_out(args.outdir, ap.format_help(), "feature_workloads.py")
    if args.family:
        write(out, args.family, args.n)
    else:
        for family, sizes in FAMILY_SIZES.items():
            for n in sizes:
                write(out, family, n)


if __name__ == "__main__":
    main()
