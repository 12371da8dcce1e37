//! Fuzz target: LSP `Content-Length` framing (`lsp::framing`), as a server's stdout would
//! feed it. Checks: an arbitrary stream yields frames no larger than the limit and then one
//! error, never a panic; any body framed by `encode` reads back exactly (alone, after another
//! frame, with the limit at its size) and is refused one byte under it.

#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use lspgate::lsp::framing::{FrameError, encode, read_frame};
use lspgate::lsp::transport::MAX_SERVER_FRAME;

const LIMITS: [usize; 5] = [0, 1, 16, 1024, MAX_SERVER_FRAME];

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime")
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, stream)) = data.split_first() else {
        return;
    };
    let max = LIMITS[pick as usize % LIMITS.len()];
    runtime().block_on(async {
        // An arbitrary stream: frames within the limit, then an error (end of stream or not).
        let mut r = tokio::io::BufReader::with_capacity(1 + pick as usize % 64, stream);
        let mut total = 0usize;
        loop {
            match read_frame(&mut r, max).await {
                Ok(body) => {
                    assert!(body.len() <= max);
                    total += body.len();
                    assert!(total <= stream.len());
                }
                Err(FrameError::TooLarge(n, m)) => {
                    assert!(n > m && m == max);
                    break;
                }
                Err(_) => break,
            }
        }

        // The stream's bytes as bodies: they read back exactly.
        let split = pick as usize % (stream.len() + 1);
        let (a, b) = stream.split_at(split);
        let mut framed = encode(a);
        framed.extend_from_slice(&encode(b));
        let mut r = tokio::io::BufReader::with_capacity(7, framed.as_slice());
        let limit = a.len().max(b.len());
        assert_eq!(read_frame(&mut r, limit).await.expect("first frame"), a);
        assert_eq!(read_frame(&mut r, limit).await.expect("second frame"), b);
        assert!(matches!(
            read_frame(&mut r, limit).await,
            Err(FrameError::Eof)
        ));
        if !stream.is_empty() {
            let framed = encode(stream);
            let mut r = framed.as_slice();
            assert!(matches!(
                read_frame(&mut r, stream.len() - 1).await,
                Err(FrameError::TooLarge(..))
            ));
        }
    });
});
