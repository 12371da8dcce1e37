;;; eglot_client.el --- Emacs's eglot as an LSP client under test -*- lexical-binding: t -*-
;; Run: emacs --batch -Q -l eglot_client.el, with LSPF_CMD (the server command, a JSON list),
;; LSPF_ROOT, LSPF_OUT (JSON lines written here), LSPF_FILE (the file opened, relative to the
;; root), LSPF_MATCH (a diagnostic message awaited), LSPF_LINE (1-based) and LSPF_SYMBOL (the
;; position asked about). It opens the file as an editor would, waits for the diagnostics, asks
;; hover, definition, references and formatting through eglot's own connection, and writes
;; what it observed: `initialized`, `diagnostics`, one `answer` per request, `done`.

(require 'json)
;; Debian's elpa-eglot (and the project and xref it needs) live in the system's package folder.
(dolist (dir (file-expand-wildcards "/usr/share/emacs/site-lisp/elpa/*"))
  (push dir load-path))
(require 'eglot)

(defvar lspf-out (getenv "LSPF_OUT"))
(defvar lspf-root (file-name-as-directory (getenv "LSPF_ROOT")))
(defvar lspf-published nil "Every publishDiagnostics: (uri . messages), newest first.")

(defun lspf-emit (alist)
  (let ((json-encoding-pretty-print nil))
    (write-region (concat (json-encode alist) "\n") nil lspf-out 'append 'silent)))

(defun lspf-wait (pred seconds)
  "Process output until PRED holds or SECONDS pass; PRED's value."
  (let ((deadline (+ (float-time) seconds)) (v nil))
    (while (and (not (setq v (funcall pred))) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    v))

(advice-add
 'eglot-handle-notification :before
 (lambda (_server method &rest params)
   (when (eq method 'textDocument/publishDiagnostics)
     (let ((messages (mapcar (lambda (d) (plist-get d :message))
                             (append (plist-get params :diagnostics) nil))))
       (push (cons (plist-get params :uri) messages) lspf-published)
       (lspf-emit `((event . "diagnostics") (uri . ,(plist-get params :uri))
                    (messages . ,(vconcat messages))))))))

(defun lspf-location (loc)
  (let ((start (plist-get (plist-get loc :range) :start)))
    `((uri . ,(plist-get loc :uri)) (line . ,(plist-get start :line)))))

(defun lspf-ask (label method params shape)
  "Asks METHOD; emits its answer made plain by SHAPE, or its error's code."
  (condition-case err
      (let ((r (jsonrpc-request (eglot-current-server) method params :timeout 120)))
        (lspf-emit `((event . "answer") (label . ,label) (result . ,(funcall shape r)))))
    (jsonrpc-error
     (lspf-emit `((event . "answer") (label . ,label)
                  (error . ,(or (alist-get 'jsonrpc-error-code (cdr err)) -1))
                  (message . ,(format "%s" (alist-get 'jsonrpc-error-message (cdr err)))))))))

(defun lspf-locations (r)
  (vconcat (mapcar #'lspf-location (if (vectorp r) (append r nil) (and r (list r))))))

(defun lspf-run ()
  (let* ((cmd (append (json-read-from-string (getenv "LSPF_CMD")) nil))
         (file (expand-file-name (getenv "LSPF_FILE") lspf-root))
         (uri (concat "file://" file))
         (buf (find-file-noselect file))
         (eglot-sync-connect 60)
         (eglot-autoshutdown nil))
    (with-current-buffer buf
      (eglot '(python-mode) `(transient . ,lspf-root) 'eglot-lsp-server cmd "python")
      (unless (lspf-wait (lambda () (and eglot--managed-mode (eglot-current-server))) 60)
        (error "eglot did not connect"))
      (lspf-emit `((event . "initialized")
                   (formatting . ,(if (eglot--server-capable :documentFormattingProvider) t
                                    :json-false))
                   (hover . ,(if (eglot--server-capable :hoverProvider) t :json-false))))
      (let ((match (getenv "LSPF_MATCH")))
        (unless (lspf-wait
                 (lambda ()
                   (seq-some (lambda (p)
                               (and (equal (car p) uri)
                                    (seq-some (lambda (m) (string-search match m)) (cdr p))))
                             lspf-published))
                 120)
          (error "no diagnostics matching %s" match)))
      (goto-char (point-min))
      (forward-line (1- (string-to-number (getenv "LSPF_LINE"))))
      (search-forward (getenv "LSPF_SYMBOL") (line-end-position))
      (backward-char 1)
      (let ((at (eglot--TextDocumentPositionParams)))
        (lspf-ask "hover" :textDocument/hover at
                  (lambda (r) (format "%S" (plist-get r :contents))))
        (lspf-ask "definition" :textDocument/definition at #'lspf-locations)
        (lspf-ask "references" :textDocument/references
                  (append at '(:context (:includeDeclaration t)))
                  #'lspf-locations)
        (lspf-ask "formatting" :textDocument/formatting
                  `(:textDocument (:uri ,uri) :options (:tabSize 4 :insertSpaces t))
                  (lambda (r) (length r))))
      (ignore-errors (eglot-shutdown (eglot-current-server))))))

(condition-case err
    (lspf-run)
  (error (lspf-emit `((event . "error") (message . ,(error-message-string err))))))
(lspf-emit '((event . "done")))
(kill-emacs 0)
