" Vim/Neovim syntax for .jv programs (idf-verify): keywords, contracts, specification
" functions (acc, old, result, forall, exists, seq, ...), comments, numbers.
" The same words as the VS Code grammar (editors/vscode/syntaxes/jv.tmLanguage.json).
if exists("b:current_syntax")
  finish
endif

syn keyword jvContract     requires ensures invariant decreases
syn keyword jvSpec         acc old result forall exists untouched perm seq
syn keyword jvGhost        open close use opening using in join
syn keyword jvConditional  if else
syn keyword jvRepeat       while
syn keyword jvStatement    return assert new
syn keyword jvStructure    class interface implements extends predicate
syn keyword jvModifier     static pure public private protected final
syn keyword jvType         int bool void
syn keyword jvThis         this
syn keyword jvBoolean      true false
syn keyword jvNull         null
syn keyword jvPermission   write none

syn match   jvNumber       "\<\d\+\>"
syn match   jvOperator     "==>\|::\|:=\|&&\|||\|[!=<>]=\|[-+*/%<>!=?]"

syn keyword jvTodo         contained TODO FIXME XXX
syn match   jvAnnotation   contained "\<\(expect\|flags\):\|\<check-only\>"
syn region  jvLineComment  start="//" end="$" contains=jvTodo,jvAnnotation,@Spell
syn region  jvBlockComment start="/\*" end="\*/" contains=jvTodo,@Spell

hi def link jvContract     Keyword
hi def link jvSpec         Function
hi def link jvGhost        Special
hi def link jvConditional  Conditional
hi def link jvRepeat       Repeat
hi def link jvStatement    Statement
hi def link jvStructure    Structure
hi def link jvModifier     StorageClass
hi def link jvType         Type
hi def link jvThis         Identifier
hi def link jvBoolean      Boolean
hi def link jvNull         Constant
hi def link jvPermission   Constant
hi def link jvNumber       Number
hi def link jvOperator     Operator
hi def link jvTodo         Todo
hi def link jvAnnotation   PreProc
hi def link jvLineComment  Comment
hi def link jvBlockComment Comment

let b:current_syntax = "jv"
