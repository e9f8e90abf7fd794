" Vim syntax file
" Language: Weft
" Filenames: *.weft
" Basic highlighting; the language server adds semantic tokens on Neovim 0.9+.

if exists('b:current_syntax')
  finish
endif

let s:cpo_save = &cpo
set cpo&vim

syn iskeyword a-z,A-Z,48-57,_,39

" Keywords and built-ins
syn keyword weftConditional if then else
syn keyword weftRepeat      loop for while do
syn keyword weftKeyword     let in
syn keyword weftDecl        def entry type nextgroup=weftDefName skipwhite
syn keyword weftInclude     import
syn keyword weftBoolean     true false
syn keyword weftType        i8 i16 i32 i64 u8 u16 u32 u64 f16 f32 f64 bool
syn keyword weftBuiltin     map map2 map3 map4 map5 reduce scan generate iota replicate
syn keyword weftBuiltin     zip zip3 unzip unzip3 scatter transpose reverse flatten unflatten
syn keyword weftBuiltin     split take drop concat length
syn keyword weftMemory      to_local to_private to_global force

syn match   weftDefName     "[a-zA-Z_][a-zA-Z0-9_']*" contained
syn match   weftTypeParam   "\%([a-zA-Z0-9_']\)\@<!'[a-zA-Z_][a-zA-Z0-9_']*"
" map@group, reduce@seq: the level is highlighted on its own.
syn match   weftStrategy    "\%(\<\%(map[2-5]\=\|reduce\|scan\|generate\)\)\@<=@\%(grid\|group\|thread\|seq\)\>"
syn match   weftNamespaced  "\<\%(i8\|i16\|i32\|i64\|u8\|u16\|u32\|u64\|f16\|f32\|f64\)\.[a-zA-Z_][a-zA-Z0-9_']*"

" Numbers: 42, 0xff, 1_000_000i64, 1.5, 2e-3, 3f32
syn match   weftNumber      "\<0[xX][0-9a-fA-F_]\+\%([iu]\%(8\|16\|32\|64\)\)\=\>"
syn match   weftNumber      "\<\d[0-9_]*\%([iu]\%(8\|16\|32\|64\)\)\=\>"
syn match   weftFloat       "\<\d[0-9_]*f\%(16\|32\|64\)\>"
syn match   weftFloat       "\<\d[0-9_]*\.\d[0-9_]*\%([eE][+-]\=\d[0-9_]*\)\=\%(f16\|f32\|f64\)\=\>"
syn match   weftFloat       "\<\d[0-9_]*[eE][+-]\=\d[0-9_]*\%(f16\|f32\|f64\)\=\>"

syn region  weftString      start=+"+ skip=+\\.+ end=+"\|$+ contains=weftEscape
syn match   weftEscape      "\\." contained

syn match   weftOperator    "\%(->\|:>\|++\|\*\*\|==\|!=\|<=\|>=\|&&\|||\|<<\|>>\|[-+*/%<>=!&|^\\]\)"
syn match   weftSize        "\%([a-zA-Z0-9_')]\)\@<!\[[^\[\]]*\]\ze\%(\[\|[a-zA-Z_(]\)" contains=weftNumber,weftOperator

" Comments, doc comments and test blocks
syn keyword weftTodo        TODO FIXME XXX NOTE contained
syn match   weftComment     "--.*$" contains=weftTodo,@Spell
syn match   weftDocComment  "^\s*--\s*|.*$" contains=weftTodo,@Spell
syn match   weftTestLine    "^\s*--\s*\%(==\|random\s\+input\s*{\|input\s*{\|output\s*{\|error:\).*$" contains=weftTestKeyword,weftNumber,weftFloat,weftType,weftBoolean,weftSize
syn match   weftTestKeyword "\%(^\s*--\s*\)\@<=\%(==\|random\s\+input\|input\|output\|error\)" contained

hi def link weftConditional Conditional
hi def link weftRepeat      Repeat
hi def link weftKeyword     Keyword
hi def link weftDecl        Keyword
hi def link weftInclude     Include
hi def link weftBoolean     Boolean
hi def link weftType        Type
hi def link weftTypeParam   Type
hi def link weftBuiltin     Function
hi def link weftMemory      StorageClass
hi def link weftStrategy    Special
hi def link weftNamespaced  Function
hi def link weftDefName     Function
hi def link weftNumber      Number
hi def link weftFloat       Float
hi def link weftString      String
hi def link weftEscape      SpecialChar
hi def link weftOperator    Operator
hi def link weftSize        Type
hi def link weftTodo        Todo
hi def link weftComment     Comment
hi def link weftDocComment  SpecialComment
hi def link weftTestLine    Comment
hi def link weftTestKeyword PreProc

let b:current_syntax = 'weft'

let &cpo = s:cpo_save
unlet s:cpo_save
