// Whitespace-only text gets no reply.
if (event.payload.type === 'text' && event.preview.trim() === '') {
  console.info('ignored a blank message');
  return { stop: true };
}
