const answers: Record<string, string> = {
  hour: 'We are open from 9:00 to 17:00, Monday to Friday.',
  price: 'Parley is free and open source.',
  contact: 'Write to hello@example.com.',
};
const question = String(workflow.question).toLowerCase();
const topic = Object.keys(answers).find((key) => question.includes(key));
workflow.answer = topic ? answers[topic] : "Sorry, I don't know that one yet.";
