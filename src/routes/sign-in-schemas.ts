/** Bodies of the browser sign-in routes and the legacy account routes. */
import { z } from '@hono/zod-openapi';

export const Email = z.string().trim().max(254).pipe(z.email({ message: 'expected an email address' }));
export const Username = z.string().trim().toLowerCase().min(3).max(39).regex(/^[a-z0-9][a-z0-9-]*$/, 'lower-case letters, digits and hyphens, not starting with a hyphen');
export const Password = z.string().min(8, 'at least 8 characters').max(200);

export const CodeRequestBody = z.object({ email: Email, username: Username.optional() }).openapi('SignInCodeRequest');
export const CodeVerifyBody = z.object({ email: Email, code: z.string().trim().min(1).max(20) }).openapi('SignInCodeVerify');
export const PasswordLoginBody = z.object({ login: z.string().trim().min(1).max(254), password: z.string().min(1).max(200) }).openapi('PasswordLogin');

export const SignupBody = z.object({ username: Username, email: Email, password: Password }).openapi('LegacySignup');
export const EmailBody = z.object({ email: Email }).openapi('EmailOnly');
export const RetrieveKeyBody = z.object({ email: Email, password: z.string().min(1).max(200) }).openapi('LegacyRetrieveKey');
